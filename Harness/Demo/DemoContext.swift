@_spi(Transport) import Convey
import Foundation

/// What every demo step works with: the server, its logs and its recorder.
@ConveyActor
final class DemoContext {
    let target: RemoteTarget
    let server: DemoServer
    let hooks = HookLog()
    let wire = WireLog()
    let recorder: TaskRecorder?
    let settings: HarnessSettings

    init(target: RemoteTarget, transport: BuiltInTransport, recorder: TaskRecorder?, settings: HarnessSettings) {
        self.target = target
        self.recorder = recorder
        self.settings = settings
        var configuration = ServerConfiguration(defaultEchoStyle: [.consoleFull, .recorded], echoSink: wire.sink)
        configuration.recorder = recorder
        server = DemoServer(target: target, configuration: configuration, hooks: hooks)
        HarnessTransport.install(on: server, target: target, builtIn: transport)
    }
}
