// Typed wrappers around libcurl's variadic calls, which Swift cannot call directly.
// Each wrapper passes exactly one argument of the type the option or info expects.
#ifndef CONVEY_CURL_SHIM_H
#define CONVEY_CURL_SHIM_H

// libcurl as Convey declares it (no development headers needed); the shim target links libcurl.so.4.
#include "../../CCurl/CCurl.h"

/// The signature curl uses for its write, header and read callbacks.
typedef size_t (*convey_curl_data_callback)(char *buffer, size_t size, size_t count, void *context);

CURLcode convey_curl_easy_setopt_long(CURL *easy, CURLoption option, long value);
CURLcode convey_curl_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value);
CURLcode convey_curl_easy_setopt_string(CURL *easy, CURLoption option, const char *value);
CURLcode convey_curl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value);
CURLcode convey_curl_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value);
CURLcode convey_curl_easy_setopt_callback(CURL *easy, CURLoption option, convey_curl_data_callback callback);

/// The signature of CURLOPT_PREREQFUNCTION: called once a connection is made or reused, just
/// before each time the request goes out on it (libcurl 7.80 and later).
typedef int (*convey_curl_prereq_callback)(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port);

CURLcode convey_curl_easy_setopt_prereq(CURL *easy, convey_curl_prereq_callback callback);

/// The signature of CURLOPT_DEBUGFUNCTION: called, while CURLOPT_VERBOSE is on, with each piece
/// of what the transfer writes and reads (`type` says which); returns 0.
typedef int (*convey_curl_debug_callback)(CURL *easy, curl_infotype type, char *data, size_t size, void *context);

CURLcode convey_curl_easy_setopt_debug(CURL *easy, convey_curl_debug_callback callback);

/// The signature of CURLOPT_OPENSOCKETFUNCTION: returns a new socket for `address` (a
/// `struct curl_sockaddr *`, opened with `convey_curl_open_socket`), or -1. `purpose` is 0 for a
/// connection's socket (CURLSOCKTYPE_IPCXN).
typedef curl_socket_t (*convey_curl_opensocket_callback)(void *context, int purpose, void *address);
/// The signature of CURLOPT_CLOSESOCKETFUNCTION: closes `socket` (`convey_curl_close_socket`), returns 0.
typedef int (*convey_curl_closesocket_callback)(void *context, curl_socket_t socket);

/// Sets both socket callbacks and their context. libcurl gives a connection the close callback
/// and context of the handle that opened it, and calls it however late the connection closes.
CURLcode convey_curl_easy_setopt_sockets(CURL *easy, convey_curl_opensocket_callback open_socket,
                                         convey_curl_closesocket_callback close_socket, void *context);
/// A socket as libcurl opens one itself for `address` (a `struct curl_sockaddr *`), or -1.
curl_socket_t convey_curl_open_socket(const void *address);
/// Closes a socket as libcurl does itself; returns `close`'s result.
int convey_curl_close_socket(curl_socket_t socket);
/// The local and remote ports of a connected socket; returns 0, or -1 when it has none yet.
int convey_socket_ports(curl_socket_t socket, int *local_port, int *remote_port);

CURLcode convey_curl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value);
CURLcode convey_curl_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value);
/// A string curl owns (NULL when it has none), valid until the handle changes or is cleaned up.
CURLcode convey_curl_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value);
/// A socket (CURLINFO_ACTIVESOCKET), which curl writes as a `curl_socket_t`, not a `long`.
CURLcode convey_curl_easy_getinfo_socket(CURL *easy, CURLINFO info, curl_socket_t *value);

/// The TLS version of the handle's connection as the TLS library names it ("TLSv1.3"), or NULL
/// without a TLS connection or with a TLS library other than OpenSSL. Call it during the transfer
/// (from a callback), while the connection is surely open. OpenSSL's `SSL_get_version` is looked
/// up in the process at run time (libcurl loaded it), so Convey does not link libssl itself.
const char *convey_curl_tls_version(CURL *easy);

CURLMcode convey_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// The result code of a CURLMSG_DONE message (a union member Swift reads awkwardly).
CURLcode convey_curl_message_result(const CURLMsg *message);

/// A share handle for one transport: its cookie jar and TLS sessions, usable by easy handles on
/// any thread (each kind of data behind its own mutex), and its connections when
/// `shares_connections` is nonzero (libcurl's shared connection cache is not safe across threads:
/// only for a transport whose transfers all run on one thread). NULL when libcurl or memory fails.
typedef struct convey_curl_share convey_curl_share;

convey_curl_share *convey_curl_share_create(int shares_connections);
/// The CURLSH * to pass to CURLOPT_SHARE.
CURLSH *convey_curl_share_handle(convey_curl_share *share);
/// Frees the share; every easy handle that used it must be cleaned up first.
void convey_curl_share_destroy(convey_curl_share *share);

/// Marks the calling thread as the thread of event loop `loop`; called once, by that thread.
void convey_event_loop_mark_current_thread(const void *loop);
/// The event loop whose thread is calling, NULL on any other thread: a thread-local read, no lock.
const void *convey_event_loop_current(void);

/// Names the calling thread as the system shows it (`/proc/PID/task/TID/comm`, `top -H`, perf),
/// cut to the 15 bytes Linux keeps.
void convey_name_current_thread(const char *name);

#endif
