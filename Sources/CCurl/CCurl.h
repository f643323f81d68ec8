// The libcurl entry points and constants Convey uses, declared here so that building needs only
// libcurl's runtime library (libcurl.so.4, which FoundationNetworking itself links on every Linux
// system with Swift), not its development headers.
//
// Every value below is part of libcurl's ABI, which has not changed since the soname became
// libcurl.so.4 (curl 7.16, 2006): option, info and error numbers are never reused or renumbered,
// and the types match <curl/curl.h> on every platform Swift runs on (`curl_off_t` is 64 bits).
// Options newer than the libcurl a machine has are refused at run time (`CURLE_UNKNOWN_OPTION`),
// not at build time. Names and values are libcurl's own (see https://curl.se/libcurl/c/).
#ifndef CONVEY_CCURL_H
#define CONVEY_CCURL_H

#include <stddef.h>
#include <stdint.h>

typedef void CURL;
typedef void CURLM;
typedef void CURLSH;
typedef int64_t curl_off_t;
typedef int curl_socket_t;

// MARK: Result codes

typedef enum {
    CURLE_OK = 0,
    CURLE_UNSUPPORTED_PROTOCOL = 1,
    CURLE_FAILED_INIT = 2,
    CURLE_URL_MALFORMAT = 3,
    CURLE_COULDNT_RESOLVE_PROXY = 5,
    CURLE_COULDNT_RESOLVE_HOST = 6,
    CURLE_COULDNT_CONNECT = 7,
    CURLE_WEIRD_SERVER_REPLY = 8,
    CURLE_HTTP2 = 16,
    CURLE_PARTIAL_FILE = 18,
    CURLE_WRITE_ERROR = 23,
    CURLE_READ_ERROR = 26,
    CURLE_OUT_OF_MEMORY = 27,
    CURLE_OPERATION_TIMEDOUT = 28,
    CURLE_SSL_CONNECT_ERROR = 35,
    CURLE_ABORTED_BY_CALLBACK = 42,
    CURLE_TOO_MANY_REDIRECTS = 47,
    CURLE_UNKNOWN_OPTION = 48,
    CURLE_GOT_NOTHING = 52,
    CURLE_SSL_ENGINE_NOTFOUND = 53,
    CURLE_SSL_ENGINE_SETFAILED = 54,
    CURLE_SEND_ERROR = 55,
    CURLE_RECV_ERROR = 56,
    CURLE_SSL_CERTPROBLEM = 58,
    CURLE_SSL_CIPHER = 59,
    CURLE_PEER_FAILED_VERIFICATION = 60,
    CURLE_BAD_CONTENT_ENCODING = 61,
    CURLE_FILESIZE_EXCEEDED = 63,
    CURLE_SEND_FAIL_REWIND = 65,
    CURLE_SSL_CACERT_BADFILE = 77,
    CURLE_SSL_SHUTDOWN_FAILED = 80,
    CURLE_AGAIN = 81,
    CURLE_SSL_CRL_BADFILE = 82,
    CURLE_SSL_ISSUER_ERROR = 83,
    CURLE_SSL_PINNEDPUBKEYNOTMATCH = 90,
    CURLE_SSL_INVALIDCERTSTATUS = 91,
    CURLE_HTTP2_STREAM = 92,
    CURLE_HTTP3 = 95,
    CURLE_SSL_CLIENTCERT = 98,
} CURLcode;

// MARK: Easy options (libcurl numbers them by argument type: long, pointer, function, curl_off_t)

typedef enum {
    CURLOPT_WRITEDATA = 10001,
    CURLOPT_URL = 10002,
    CURLOPT_READDATA = 10009,
    CURLOPT_ERRORBUFFER = 10010,
    CURLOPT_WRITEFUNCTION = 20011,
    CURLOPT_READFUNCTION = 20012,
    CURLOPT_HTTPHEADER = 10023,
    CURLOPT_HEADERDATA = 10029,
    CURLOPT_COOKIEFILE = 10031,
    CURLOPT_CUSTOMREQUEST = 10036,
    CURLOPT_NOBODY = 44,
    CURLOPT_POST = 47,
    CURLOPT_CAINFO = 10065,
    CURLOPT_HEADERFUNCTION = 20079,
    CURLOPT_HTTPGET = 80,
    CURLOPT_BUFFERSIZE = 98,
    CURLOPT_NOSIGNAL = 99,
    CURLOPT_SHARE = 10100,
    CURLOPT_ACCEPT_ENCODING = 10102,
    CURLOPT_MAXFILESIZE_LARGE = 30117,
    CURLOPT_POSTFIELDSIZE_LARGE = 30120,
    CURLOPT_TIMEOUT_MS = 155,
    CURLOPT_CONNECTTIMEOUT_MS = 156,
    CURLOPT_HTTP_CONTENT_DECODING = 158,
    CURLOPT_PIPEWAIT = 237,
    CURLOPT_SUPPRESS_CONNECT_HEADERS = 265,
    CURLOPT_PREREQFUNCTION = 20312,
    CURLOPT_PREREQDATA = 10313,
    CURLOPT_PROTOCOLS = 181,
    CURLOPT_REDIR_PROTOCOLS = 182,
    CURLOPT_PROTOCOLS_STR = 10318,
    CURLOPT_REDIR_PROTOCOLS_STR = 10319,
    // A connection alone, for bytes of the caller's own (curl_easy_send, curl_easy_recv): WebSockets.
    CURLOPT_CONNECT_ONLY = 141,
    CURLOPT_FRESH_CONNECT = 74,
    // TLS: trust, pinning, versions, client certificates.
    CURLOPT_SSLCERT = 10025,
    CURLOPT_KEYPASSWD = 10026,
    CURLOPT_SSLVERSION = 32,
    CURLOPT_SSL_VERIFYPEER = 64,
    CURLOPT_SSL_VERIFYHOST = 81,
    CURLOPT_SSLCERTTYPE = 10086,
    CURLOPT_SSLKEY = 10087,
    CURLOPT_SSLKEYTYPE = 10088,
    CURLOPT_CAPATH = 10097,
    CURLOPT_PINNEDPUBLICKEY = 10230,
    CURLOPT_CAINFO_BLOB = 40309,
    // Proxies and HTTP versions.
    CURLOPT_PROXY = 10004,
    CURLOPT_HTTPPROXYTUNNEL = 61,
    CURLOPT_HTTP_VERSION = 84,
    CURLOPT_PROXYUSERNAME = 10175,
    CURLOPT_PROXYPASSWORD = 10176,
    CURLOPT_NOPROXY = 10177,
    // The request head as sent, for a request that asks for it (`TransportRequest.capturesSentHead`).
    CURLOPT_VERBOSE = 41,
    CURLOPT_DEBUGFUNCTION = 20094,
    CURLOPT_DEBUGDATA = 10095,
    // Sockets opened and closed through Convey, which counts connections (metrics).
    CURLOPT_OPENSOCKETFUNCTION = 20163,
    CURLOPT_OPENSOCKETDATA = 10164,
    CURLOPT_CLOSESOCKETFUNCTION = 20208,
    CURLOPT_CLOSESOCKETDATA = 10209,
} CURLoption;

// What CURLOPT_DEBUGFUNCTION is handed: CURLINFO_HEADER_OUT is the request head as written.
typedef enum {
    CURLINFO_TEXT = 0,
    CURLINFO_HEADER_IN = 1,
    CURLINFO_HEADER_OUT = 2,
    CURLINFO_DATA_IN = 3,
    CURLINFO_DATA_OUT = 4,
    CURLINFO_SSL_DATA_IN = 5,
    CURLINFO_SSL_DATA_OUT = 6,
} curl_infotype;

// MARK: Transfer information (numbered by result type: string, long, curl_off_t)

typedef enum {
    CURLINFO_EFFECTIVE_URL = 0x100000 + 1,
    CURLINFO_CAINFO = 0x100000 + 61,
    CURLINFO_RESPONSE_CODE = 0x200000 + 2,
    CURLINFO_OS_ERRNO = 0x200000 + 25,
    CURLINFO_NUM_CONNECTS = 0x200000 + 26,
    CURLINFO_HTTP_VERSION = 0x200000 + 46,
    CURLINFO_TLS_SSL_PTR = 0x400000 + 45,
    CURLINFO_ACTIVESOCKET = 0x500000 + 44,
    CURLINFO_SIZE_UPLOAD_T = 0x600000 + 7,
    CURLINFO_SIZE_DOWNLOAD_T = 0x600000 + 8,
    CURLINFO_CONTENT_LENGTH_DOWNLOAD_T = 0x600000 + 15,
    CURLINFO_TOTAL_TIME_T = 0x600000 + 50,
    CURLINFO_NAMELOOKUP_TIME_T = 0x600000 + 51,
    CURLINFO_CONNECT_TIME_T = 0x600000 + 52,
    CURLINFO_PRETRANSFER_TIME_T = 0x600000 + 53,
    CURLINFO_STARTTRANSFER_TIME_T = 0x600000 + 54,
    CURLINFO_APPCONNECT_TIME_T = 0x600000 + 56,
} CURLINFO;

// The HTTP versions CURLINFO_HTTP_VERSION reports.
enum {
    CURL_HTTP_VERSION_NONE = 0,
    CURL_HTTP_VERSION_1_0 = 1,
    CURL_HTTP_VERSION_1_1 = 2,
    CURL_HTTP_VERSION_2_0 = 3,
    CURL_HTTP_VERSION_2TLS = 4,
    CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE = 5,
    CURL_HTTP_VERSION_3 = 30,
};

// CURLOPT_SSLVERSION: the lowest TLS version to accept.
enum {
    CURL_SSLVERSION_TLSv1_2 = 6,
    CURL_SSLVERSION_TLSv1_3 = 7,
};

// CURLINFO_TLS_SSL_PTR's answer: the TLS library and its connection object (OpenSSL: an `SSL *`).
typedef enum {
    CURLSSLBACKEND_NONE = 0,
    CURLSSLBACKEND_OPENSSL = 1,
} curl_sslbackend;

struct curl_tlssessioninfo {
    curl_sslbackend backend;
    void *internals;
};

// CURLOPT_CAINFO_BLOB's argument. CURL_BLOB_NOCOPY: curl reads `data` in place; it must outlive the handle.
struct curl_blob {
    void *data;
    size_t len;
    unsigned int flags;
};
#define CURL_BLOB_NOCOPY 0
#define CURL_BLOB_COPY 1

#define CURL_GLOBAL_ALL 3
#define CURL_ERROR_SIZE 256
#define CURL_MAX_HTTP_HEADER 102400
#define CURL_READFUNC_ABORT 0x10000000
#define CURL_WRITEFUNC_PAUSE 0x10000001
#define CURLPAUSE_RECV 1
#define CURLPAUSE_SEND 4
#define CURLPAUSE_ALL 5
#define CURLPAUSE_CONT 0
#define CURL_PREREQFUNC_OK 0
#define CURL_PREREQFUNC_ABORT 1

/// The signature of CURLOPT_PREREQFUNCTION: return CURL_PREREQFUNC_OK to send the request.
typedef int (*curl_prereq_callback)(void *context, char *primaryIP, char *localIP, int primaryPort, int localPort);

struct curl_slist {
    char *data;
    struct curl_slist *next;
};

// The first fields of libcurl's version information, which only ever grows at its end: the
// version and the features it was built with (which content codings it decodes).
typedef struct {
    int age;
    const char *version;
    unsigned int version_num;
    const char *host;
    int features;
} curl_version_info_data;
#define CURLVERSION_FIRST 0
#define CURL_VERSION_LIBZ 8           // 1 << 3
#define CURL_VERSION_BROTLI 8388608   // 1 << 23
#define CURL_VERSION_ZSTD 67108864    // 1 << 26

curl_version_info_data *curl_version_info(int age);
CURLcode curl_global_init(long flags);
CURL *curl_easy_init(void);
void curl_easy_cleanup(CURL *easy);
void curl_easy_reset(CURL *easy);
CURLcode curl_easy_setopt(CURL *easy, CURLoption option, ...);
CURLcode curl_easy_getinfo(CURL *easy, CURLINFO info, ...);
CURLcode curl_easy_pause(CURL *easy, int bitmask);
const char *curl_easy_strerror(CURLcode code);
// On a CURLOPT_CONNECT_ONLY handle once connected: non-blocking, CURLE_AGAIN when the socket is not ready.
CURLcode curl_easy_send(CURL *easy, const void *buffer, size_t length, size_t *sent);
CURLcode curl_easy_recv(CURL *easy, void *buffer, size_t length, size_t *received);
struct curl_slist *curl_slist_append(struct curl_slist *list, const char *string);
void curl_slist_free_all(struct curl_slist *list);

// MARK: Multi interface

typedef enum {
    CURLM_CALL_MULTI_PERFORM = -1,
    CURLM_OK = 0,
} CURLMcode;

typedef enum {
    CURLMSG_NONE = 0,
    CURLMSG_DONE = 1,
} CURLMSG;

typedef enum {
    CURLMOPT_MAX_HOST_CONNECTIONS = 7,
} CURLMoption;

typedef struct CURLMsg {
    CURLMSG msg;
    CURL *easy_handle;
    union {
        void *whatever;
        CURLcode result;
    } data;
} CURLMsg;

struct curl_waitfd {
    curl_socket_t fd;
    short events;
    short revents;
};

// What a curl_waitfd waits for and what happened: poll(2)'s events under curl's own numbers.
#define CURL_WAIT_POLLIN 0x0001
#define CURL_WAIT_POLLOUT 0x0004

CURLM *curl_multi_init(void);
CURLMcode curl_multi_cleanup(CURLM *multi);
CURLMcode curl_multi_add_handle(CURLM *multi, CURL *easy);
CURLMcode curl_multi_remove_handle(CURLM *multi, CURL *easy);
CURLMcode curl_multi_perform(CURLM *multi, int *runningHandles);
CURLMcode curl_multi_poll(CURLM *multi, struct curl_waitfd extraFDs[], unsigned int extraFDCount, int timeoutMilliseconds, int *activeFDs);
CURLMcode curl_multi_wakeup(CURLM *multi);
CURLMsg *curl_multi_info_read(CURLM *multi, int *messagesInQueue);
CURLMcode curl_multi_setopt(CURLM *multi, CURLMoption option, ...);
const char *curl_multi_strerror(CURLMcode code);

// MARK: Share interface

typedef enum {
    CURL_LOCK_DATA_NONE = 0,
    CURL_LOCK_DATA_SHARE = 1,
    CURL_LOCK_DATA_COOKIE = 2,
    CURL_LOCK_DATA_DNS = 3,
    CURL_LOCK_DATA_SSL_SESSION = 4,
    CURL_LOCK_DATA_CONNECT = 5,
    CURL_LOCK_DATA_PSL = 6,
    CURL_LOCK_DATA_HSTS = 7,
    // One past the kinds this header knows; newer libcurls may pass larger values, which the
    // lock functions ignore (Convey shares only cookies and TLS sessions).
    CURL_LOCK_DATA_LAST = 8,
} curl_lock_data;

typedef enum {
    CURL_LOCK_ACCESS_NONE = 0,
    CURL_LOCK_ACCESS_SHARED = 1,
    CURL_LOCK_ACCESS_SINGLE = 2,
} curl_lock_access;

typedef enum {
    CURLSHE_OK = 0,
    CURLSHE_BAD_OPTION = 1,
    CURLSHE_IN_USE = 2,
    CURLSHE_INVALID = 3,
    CURLSHE_NOMEM = 4,
    CURLSHE_NOT_BUILT_IN = 5,
} CURLSHcode;

typedef enum {
    CURLSHOPT_SHARE = 1,
    CURLSHOPT_LOCKFUNC = 3,
    CURLSHOPT_UNLOCKFUNC = 4,
    CURLSHOPT_USERDATA = 5,
} CURLSHoption;

typedef void (*curl_lock_function)(CURL *easy, curl_lock_data data, curl_lock_access access, void *context);
typedef void (*curl_unlock_function)(CURL *easy, curl_lock_data data, void *context);

CURLSH *curl_share_init(void);
CURLSHcode curl_share_setopt(CURLSH *share, CURLSHoption option, ...);
CURLSHcode curl_share_cleanup(CURLSH *share);

#endif
