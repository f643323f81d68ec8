import Foundation

let command = Task { await Harness.run(Array(CommandLine.arguments.dropFirst())) }
let interrupts = Interrupts.cancelling(command)
let exitCode = await command.value
interrupts.cancel()
exit(exitCode.rawValue)
