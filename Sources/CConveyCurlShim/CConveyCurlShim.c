// Linux's two-argument pthread_setname_np.
#define _GNU_SOURCE
#include "CConveyCurlShim.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

CURLcode convey_curl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode convey_curl_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode convey_curl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode convey_curl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode convey_curl_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode convey_curl_easy_setopt_callback(CURL *easy, CURLoption option, convey_curl_data_callback callback) {
    return curl_easy_setopt(easy, option, callback);
}

CURLcode convey_curl_easy_setopt_prereq(CURL *easy, convey_curl_prereq_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, callback);
}

CURLcode convey_curl_easy_setopt_debug(CURL *easy, convey_curl_debug_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, callback);
}

CURLcode convey_curl_easy_setopt_sockets(CURL *easy, convey_curl_opensocket_callback open_socket,
                                         convey_curl_closesocket_callback close_socket, void *context) {
    CURLcode result = curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    if (result == CURLE_OK) result = curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, context);
    if (result == CURLE_OK) result = curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    if (result == CURLE_OK) result = curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, context);
    return result;
}

// libcurl's `struct curl_sockaddr`, as <curl/curl.h> declares it.
struct convey_curl_sockaddr {
    int family;
    int socktype;
    int protocol;
    unsigned int addrlen;
    struct sockaddr addr;
};

curl_socket_t convey_curl_open_socket(const void *address) {
    const struct convey_curl_sockaddr *socket_address = address;
    return socket(socket_address->family, socket_address->socktype, socket_address->protocol);
}

int convey_curl_close_socket(curl_socket_t socket) {
    return close(socket);
}

static int convey_port_of(const struct sockaddr_storage *address) {
    if (address->ss_family == AF_INET) return ntohs(((const struct sockaddr_in *)address)->sin_port);
    if (address->ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)address)->sin6_port);
    return -1;
}

int convey_socket_ports(curl_socket_t socket, int *local_port, int *remote_port) {
    struct sockaddr_storage local, remote;
    socklen_t local_size = sizeof local, remote_size = sizeof remote;
    if (getsockname(socket, (struct sockaddr *)&local, &local_size) != 0) return -1;
    if (getpeername(socket, (struct sockaddr *)&remote, &remote_size) != 0) return -1;
    *local_port = convey_port_of(&local);
    *remote_port = convey_port_of(&remote);
    return 0;
}

CURLcode convey_curl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode convey_curl_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode convey_curl_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode convey_curl_easy_getinfo_socket(CURL *easy, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

typedef const char *(*convey_ssl_get_version)(const void *ssl);
static convey_ssl_get_version convey_ssl_get_version_function;
static pthread_once_t convey_ssl_get_version_once = PTHREAD_ONCE_INIT;

static void convey_find_ssl_get_version(void) {
    convey_ssl_get_version_function = (convey_ssl_get_version)dlsym(RTLD_DEFAULT, "SSL_get_version");
}

const char *convey_curl_tls_version(CURL *easy) {
    struct curl_tlssessioninfo *info = NULL;
    if (curl_easy_getinfo(easy, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || info == NULL
        || info->backend != CURLSSLBACKEND_OPENSSL || info->internals == NULL) {
        return NULL;
    }
    pthread_once(&convey_ssl_get_version_once, convey_find_ssl_get_version);
    return convey_ssl_get_version_function ? convey_ssl_get_version_function(info->internals) : NULL;
}

CURLMcode convey_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLcode convey_curl_message_result(const CURLMsg *message) {
    return message->data.result;
}

struct convey_curl_share {
    CURLSH *handle;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static void convey_curl_share_lock(CURL *easy, curl_lock_data data, curl_lock_access access, void *context) {
    (void)easy;
    (void)access;
    convey_curl_share *share = context;
    if (data >= 0 && data < CURL_LOCK_DATA_LAST) pthread_mutex_lock(&share->locks[data]);
}

static void convey_curl_share_unlock(CURL *easy, curl_lock_data data, void *context) {
    (void)easy;
    convey_curl_share *share = context;
    if (data >= 0 && data < CURL_LOCK_DATA_LAST) pthread_mutex_unlock(&share->locks[data]);
}

convey_curl_share *convey_curl_share_create(int shares_connections) {
    convey_curl_share *share = calloc(1, sizeof(convey_curl_share));
    if (share == NULL) return NULL;
    share->handle = curl_share_init();
    if (share->handle == NULL) {
        free(share);
        return NULL;
    }
    for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_init(&share->locks[index], NULL);
    curl_share_setopt(share->handle, CURLSHOPT_LOCKFUNC, convey_curl_share_lock);
    curl_share_setopt(share->handle, CURLSHOPT_UNLOCKFUNC, convey_curl_share_unlock);
    curl_share_setopt(share->handle, CURLSHOPT_USERDATA, share);
    curl_share_setopt(share->handle, CURLSHOPT_SHARE, CURL_LOCK_DATA_COOKIE);
    curl_share_setopt(share->handle, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    // Connections too, on a loop that transports share: a transport never reuses another's
    // (libcurl matches TLS settings before reusing, but not proxy credentials nor the HTTP version
    // asked for). A transport with loops of its own keeps them in each loop's multi handle instead.
    if (shares_connections) curl_share_setopt(share->handle, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    return share;
}

CURLSH *convey_curl_share_handle(convey_curl_share *share) {
    return share->handle;
}

void convey_curl_share_destroy(convey_curl_share *share) {
    if (share == NULL) return;
    // CURLSHE_IN_USE means a handle still points at it: leaking beats freeing memory in use.
    if (curl_share_cleanup(share->handle) != CURLSHE_OK) return;
    for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_destroy(&share->locks[index]);
    free(share);
}

static _Thread_local const void *convey_current_event_loop = NULL;

void convey_event_loop_mark_current_thread(const void *loop) {
    convey_current_event_loop = loop;
}

const void *convey_event_loop_current(void) {
    return convey_current_event_loop;
}

void convey_name_current_thread(const char *name) {
    // The kernel keeps 15 bytes and a terminating zero; a longer name would be refused whole.
    char shortened[16];
    strncpy(shortened, name, sizeof shortened - 1);
    shortened[sizeof shortened - 1] = '\0';
#if defined(__linux__)
    pthread_setname_np(pthread_self(), shortened);
#elif defined(__APPLE__)
    // Darwin's takes the name alone and names only the calling thread, which is this one. The shim
    // is built for Linux, but Xcode's whole-package scheme compiles every target (SwiftPM #6554).
    pthread_setname_np(shortened);
#endif
}
