// The few zlib functions Convey uses to gzip request bodies, decode response bodies and compress
// WebSocket messages (permessage-deflate), declared here so that building
// needs only zlib's runtime library (every Linux system with Swift and every Apple SDK has it),
// not its development headers. The layout of `convey_z_stream` is zlib's `z_stream`, fixed by
// zlib's ABI; `deflateInit2_` checks its size and fails cleanly on a mismatch.
#ifndef CONVEY_CZLIB_SHIM_H
#define CONVEY_CZLIB_SHIM_H

typedef struct convey_z_stream {
    const unsigned char *next_in;
    unsigned int avail_in;
    unsigned long total_in;
    unsigned char *next_out;
    unsigned int avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *(*zalloc)(void *opaque, unsigned int items, unsigned int size);
    void (*zfree)(void *opaque, void *address);
    void *opaque;
    int data_type;
    unsigned long adler;
    unsigned long reserved;
} convey_z_stream;

int deflateInit2_(convey_z_stream *stream, int level, int method, int windowBits, int memLevel,
                  int strategy, const char *version, int streamSize);
int deflate(convey_z_stream *stream, int flush);
int deflateReset(convey_z_stream *stream);
int deflateEnd(convey_z_stream *stream);

int inflateInit2_(convey_z_stream *stream, int windowBits, const char *version, int streamSize);
int inflate(convey_z_stream *stream, int flush);
int inflateReset(convey_z_stream *stream);
int inflateEnd(convey_z_stream *stream);

#endif
