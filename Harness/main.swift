import Foundation

Interrupts.install()
let command = Task { await Harness.run(Array(CommandLine.arguments.dropFirst())) }
Interrupts.cancel(command)
let exitCode = await command.value
exit(exitCode.rawValue)
