extension ConveyServer {
    /// The features of Convey that take part in every server's runs, in the order they join a
    /// run (`RunFeature`): the cache and upload progress add stages, echo and recording an
    /// observer, tracing a step around the run and one around each exchange, each only to the runs
    /// that need it. The core knows them only through this list.
    nonisolated static let builtInFeatures: [any RunFeature] = [
        CacheFeature(), UploadProgressFeature(), EchoFeature(), TracingFeature(), BackgroundRunFeature(),
    ]
}
