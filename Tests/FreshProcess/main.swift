// A program the tests run in a process of its own, for what one test process cannot show:
// standard output as a pipe, and a process in which no default server was ever made.
//
//   ConveyFreshProcess echo-order          prints, runs two tasks with echo on, prints again
//   ConveyFreshProcess no-default-server   runs a task before any default server exists
@_spi(Transport) import Convey
import Foundation

/// A task on `server`, echoed in one line per attempt, to standard output (the default sink).
struct ProbeTask: ServerTask {
    let server: ConveyServer
    let number: Int
    var path: String { "items/\(number)" }
    var echoStyle: TaskEchoStyle { .consoleMinimum }
}

/// A task that names no server: it runs on `ConveyServer.default`.
struct UnplacedTask: ServerTask {
    var path: String { "items/1" }
}

@ConveyActor
func stubServer() -> ConveyServer {
    let server = ConveyServer(remote: Remote(name: "probe", string: "http://probe.invalid"))
    server.transport = StubTransport { request in
        TransportResponse(url: request.request.url, statusCode: 200, body: Data("ok".utf8))
    }
    return server
}

switch CommandLine.arguments.dropFirst().first {
case "echo-order":
    let server = await stubServer()
    print("app: before")
    try await ProbeTask(server: server, number: 1).send()
    print("app: between")
    try await ProbeTask(server: server, number: 2).send()
    print("app: after")
case "no-default-server":
    do {
        try await UnplacedTask().send()
        print("unexpected: the task ran")
    } catch {
        print("logDetail: " + ((error as? ConveyError)?.logDetail ?? "\(error)"))
        print("displayMessage: " + (error.displayMessage ?? "nil"))
    }
default:
    FileHandle.standardError.write(Data("usage: ConveyFreshProcess echo-order|no-default-server\n".utf8))
    exit(1)
}
