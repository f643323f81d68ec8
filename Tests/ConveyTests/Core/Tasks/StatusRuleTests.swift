import Foundation
import Testing
@_spi(Transport) @_spi(Tools) @testable import Convey

private struct StatusTask: ServerTask {
    let server: ConveyServer
    let code: Int
    var rule: StatusRule = .standard
    var path: String { "status/\(code)" }
    var statusRule: StatusRule { rule }
}

private struct DefaultRuleTask: ServerTask {
    let server: ConveyServer
    var path: String { "status/404" }
}

@Suite("Status rules")
@ConveyActor
struct StatusRuleTests {
    @Test func theStandardRuleThrowsEverythingOutsideSuccess() {
        for code in [100, 199, 301, 304, 400, 404, 409, 500, 599, 600] { #expect(StatusRule.standard.throwsError(forStatus: code), "\(code)") }
        for code in [200, 204, 299] { #expect(!StatusRule.standard.throwsError(forStatus: code), "\(code)") }
        for code in [200, 404, 500] { #expect(!StatusRule.never.throwsError(forStatus: code), "\(code)") }
    }

    @Test func returnedCodesWinOverThrowingCodesAndClasses() {
        let rule = StatusRule.throwing([.serverError]).throwing(409).returning(503)
        #expect(rule.throwsError(forStatus: 500))
        #expect(!rule.throwsError(forStatus: 503))
        #expect(rule.throwsError(forStatus: 409))
        #expect(!rule.throwsError(forStatus: 404))
        #expect(!rule.throwing(404).returning(404).throwsError(forStatus: 404))
    }

    @Test func theDefaultRuleFollowsTheServersSetting() async throws {
        let server = try stubServer(.answering(status: 404, body: "missing"))
        await #expect(throws: HTTPError.self) { try await DefaultRuleTask(server: server).download() }
        server.configuration.reportBadHTTPStatusAsError = false
        #expect(try await DefaultRuleTask(server: server).download().statusCode == 404)
    }

    @Test func aTaskCanReturnA404WhileTheServerThrowsForEveryoneElse() async throws {
        let server = try stubServer(.answering(status: 404, body: "not yet"))
        let response = try await StatusTask(server: server, code: 404, rule: .standard.returning(404)).download()
        #expect(response.statusCode == 404)
        #expect(response.stringResult == "not yet")
        await #expect(throws: HTTPError.self) { try await DefaultRuleTask(server: server).download() }
    }

    @Test func aTaskCanThrowWhileTheServerReturnsEverything() async throws {
        let server = try stubServer(.answering(status: 500)) { $0.reportBadHTTPStatusAsError = false }
        let error = await #expect(throws: HTTPError.self) {
            try await StatusTask(server: server, code: 500, rule: .throwing([.serverError])).download()
        }
        #expect(error?.serverError == .internalServer)
    }

    @Test func specificErrorsAreCaughtByTheirCase() async throws {
        func caught(_ status: Int) async throws -> String {
            let server = try stubServer(.answering(status: status))
            do {
                try await StatusTask(server: server, code: status).send()
                return "none"
            } catch HTTPError.ClientError.notFound {
                return "notFound"
            } catch HTTPError.ClientError.conflict {
                return "conflict"
            } catch HTTPError.ServerError.internalServer {
                return "internalServer"
            } catch let error as HTTPError where error.serverError != nil {
                return "other server error \(error.statusCode)"
            }
        }
        #expect(try await caught(404) == "notFound")
        #expect(try await caught(409) == "conflict")
        #expect(try await caught(500) == "internalServer")
        #expect(try await caught(503) == "other server error 503")
    }
}

@Suite("Status rules on the wire", .wire)
@ConveyActor
struct StatusRuleWireTests {
    @Test(arguments: [404, 409, 418])
    func clientErrorsComeBackWhenTheTaskSaysSo(code: Int) async throws {
        let server = try httpbinServer()
        let response = try await StatusTask(server: server, code: code, rule: .throwing([.serverError])).download()
        #expect(response.statusCode == code)
        #expect(response.responseType == .clientError)
    }

    @Test func serverErrorsStillThrowUnderTheSameRule() async throws {
        let server = try httpbinServer()
        let error = await #expect(throws: HTTPError.self) {
            try await StatusTask(server: server, code: 503, rule: .throwing([.serverError])).download()
        }
        #expect(error?.serverError == .serviceUnavailable)
    }

    @Test func aSingleCodeCanBeReturnedOrThrown() async throws {
        let server = try httpbinServer()
        #expect(try await StatusTask(server: server, code: 404, rule: .standard.returning(404)).download().statusCode == 404)
        let error = await #expect(throws: HTTPError.self) {
            try await StatusTask(server: server, code: 409, rule: .standard.returning(404)).download()
        }
        #expect(error?.clientError == .conflict)
        let thrown = await #expect(throws: HTTPError.self) {
            try await StatusTask(server: server, code: 202, rule: .never.throwing(202)).download()
        }
        #expect(thrown?.statusCode == 202)
    }
}
