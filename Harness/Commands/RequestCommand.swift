import Convey
import Foundation

/// `get|post|put|patch|delete PATH`: one request, sent by hand.
enum RequestCommand {
    static func command(for method: HTTPMethod) -> Command {
        let name = method.rawValue.lowercased()
        let bodyOptions = method.forbidsBody ? [] : RequestOptions.bodyOptions
        return Command(
            name: name,
            synopsis: "\(name) PATH|URL [options]",
            summary: "Sends a \(method) request and prints the status line, headers, body and timing.",
            details: """
                PATH goes under the remote (--remote, $CONVEY_REMOTE, else the embedded server); a full
                http(s) URL chooses the server itself. The task is recorded (see 'recorded') unless
                --no-record is given. Credentials in headers are masked in the output.

                Examples:
                  convey-harness \(name) /\(method.forbidsBody ? "get" : name) -q page=2 -H 'Accept: application/json'
                  convey-harness \(name) http://127.0.0.1:8080/\(method.forbidsBody ? "get" : name) --json
                """ + (method.forbidsBody ? "" : "\n  convey-harness \(name) /\(name) --json-body '{\"name\": \"Ada\"}'\n  convey-harness \(name) /\(name) --form city=Zürich --file notes=@notes.txt"),
            options: RequestOptions.requestOptions + [RequestOptions.queryOption] + bodyOptions + OutputOptions.options + StreamOptions.options
                + HAROptions.options,
            run: { arguments, settings in
                let request: RequestOptions
                let output: OutputOptions
                let streamMode: StreamOptions.Mode?
                let har: HAROptions
                do throws(UsageError) {
                    request = try RequestOptions(arguments, method: method, command: name)
                    output = try OutputOptions(arguments, command: name)
                    streamMode = try StreamOptions.mode(arguments, command: name)
                    har = try HAROptions(arguments, command: name)
                } catch {
                    return settings.console.report(error)
                }
                if let streamMode {
                    return await StreamRunner.run(target: request.target, transport: request.transport, connection: request.connection, mode: streamMode, settings: settings, har: har) { server throws(LocalFailure) in
                        try request.task(on: server, method: method)
                    }
                }
                return await RequestRunner.run(target: request.target, transport: request.transport, connection: request.connection, method: method, output: output, settings: settings, har: har) { server throws(LocalFailure) in
                    try request.task(on: server, method: method)
                }
            })
    }
}
