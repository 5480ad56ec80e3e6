/* The live server's thread (live_internal.h): libwebsockets' event loop serving the viewer page
 * over HTTP (GET /) and the simulation's frames over WebSocket (ws://HOST:PORT/live, protocol
 * "moreau-live").
 *
 * Frames: the stepping thread publishes the newest frame under the mutex and wakes this thread
 * (lws_cancel_service); every page then asks to write (lws_callback_on_writable_all_protocol),
 * and a page whose socket can take data gets the newest frame it has not had, with the step rows
 * since its last message. libwebsockets buffers a write the socket did not take whole and calls
 * back only once it is out, so a page that reads slowly (or not at all) is simply asked less
 * often: frames are dropped for it, nothing queues, and the stepping thread never waits for it.
 *
 * Commands from a page are short text messages queued for mr_live_poll; "lat SEQ MS" (a frame's
 * latency as the page measured it) is recorded here. */
#include <arpa/inet.h>
#include <errno.h>
#include <libwebsockets.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "viewer/live_internal.h"

#define HTTP_CHUNK 32768

/* per connection: an HTTP request for the page, or a page's WebSocket */
typedef struct {
  size_t sent;        /* HTTP: bytes of the page written */
  uint64_t seq;       /* WS: the last frame sent */
  uint64_t next_row;  /* WS: the next step row to send */
  int status_sent;    /* WS: the end status was sent */
  unsigned char *buf; /* WS: LWS_PRE bytes, then the message */
  size_t cap;
  char in[LIVE_CMD_LEN]; /* WS: a text message in fragments */
  size_t nin;
} conn;

/* ---- the request's origin ---- */

/* with a loopback listener, the Host header must name this server (no DNS rebinding) and an
 * Origin header, when sent, must be this server's page (no other web page drives it) */
static int allowed(struct lws *wsi, const mr_live *l) {
  if (!l->loopback) return 1;
  char host[128] = "", origin[160] = "", want[64];
  if (lws_hdr_copy(wsi, host, sizeof host, WSI_TOKEN_HOST) <= 0) return 0;
  int ok = 0;
  const char *names[] = {"127.0.0.1", "localhost", "[::1]"};
  for (int k = 0; k < 3 && !ok; ++k) {
    snprintf(want, sizeof want, "%s:%d", names[k], l->port);
    ok = !strcmp(host, want);
  }
  if (!ok) return 0;
  if (lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN) <= 0) return 1;
  return !strncmp(origin, "http://", 7) && !strcmp(origin + 7, host);
}

/* ---- HTTP: the page ---- */

static int http_start(struct lws *wsi, mr_live *l, conn *c, const char *uri) {
  if (!allowed(wsi, l)) return lws_return_http_status(wsi, HTTP_STATUS_FORBIDDEN, NULL), -1;
  if (strcmp(uri, "/") && strcmp(uri, "/index.html"))
    return lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL), -1;
  unsigned char buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf;
  if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, "text/html; charset=utf-8", l->page_len, &p,
                                  end) ||
      lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                  (const unsigned char *)"no-store", 8, &p, end) ||
      lws_finalize_write_http_header(wsi, start, &p, end))
    return 1;
  c->sent = 0;
  lws_callback_on_writable(wsi);
  return 0;
}

static int reserve(conn *c, size_t n);

static int http_write(struct lws *wsi, mr_live *l, conn *c) {
  size_t n = l->page_len - c->sent < HTTP_CHUNK ? l->page_len - c->sent : HTTP_CHUNK;
  if (reserve(c, n)) return -1;
  memcpy(c->buf + LWS_PRE, l->page + c->sent, n);
  c->sent += n;
  int last = c->sent == l->page_len;
  if (lws_write(wsi, c->buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n)
    return -1;
  if (!last) return lws_callback_on_writable(wsi), 0;
  return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                         size_t len) {
  mr_live *l = lws_context_user(lws_get_context(wsi));
  conn *c = user;
  switch (reason) {
  case LWS_CALLBACK_HTTP:
    return http_start(wsi, l, c, (const char *)in);
  case LWS_CALLBACK_HTTP_WRITEABLE:
    return c ? http_write(wsi, l, c) : 0;
  case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
  case LWS_CALLBACK_CLOSED_HTTP:
    if (c) free(c->buf), c->buf = NULL, c->cap = 0;
    return lws_callback_http_dummy(wsi, reason, user, in, len);
  default:
    return lws_callback_http_dummy(wsi, reason, user, in, len);
  }
}

/* ---- WebSocket: frames out, commands in ---- */

static int reserve(conn *c, size_t n) {
  if (LWS_PRE + n <= c->cap) return 0;
  size_t cap = c->cap ? c->cap : 4096;
  while (cap < LWS_PRE + n)
    cap *= 2;
  unsigned char *b = realloc(c->buf, cap);
  if (!b) return -1;
  c->buf = b, c->cap = cap;
  return 0;
}

/* the message for c under the mutex: the newest frame (or step rows only) and the rows since
 * its last message; 0 when there is nothing new, -1 when out of memory */
static size_t build_message(mr_live *l, conn *c) {
  if (c->next_row < l->reset_row) c->next_row = l->reset_row;
  if (l->rows > c->next_row + LIVE_RING) c->next_row = l->rows - LIVE_RING;
  uint64_t nrows = l->rows - c->next_row;
  if (nrows > LIVE_MSG_ROWS) nrows = LIVE_MSG_ROWS;
  int frame = l->seq > c->seq && l->frame_len;
  if (!frame && !nrows) return 0;
  size_t head = frame ? l->frame_len : LIVE_HEADER * 8, rowbytes = 4 * LIVE_ROW * nrows;
  if (reserve(c, head + rowbytes)) return (size_t)-1;
  unsigned char *m = c->buf + LWS_PRE;
  memcpy(m, l->frame, frame ? head : LIVE_HEADER * 8);
  double *h = (double *)m;
  if (!frame) h[H_KIND] = LIVE_ROWS, h[H_NPOSES] = 0, h[H_NCONTACTS] = 0, h[H_PERTURB] = -1;
  h[H_NROWS] = (double)nrows;
  h[H_FIRST_ROW] = (double)c->next_row;
  h[H_VIEWERS] = l->viewers;
  float *out = (float *)(m + head);
  for (uint64_t r = 0; r < nrows; ++r)
    memcpy(out + LIVE_ROW * r, l->ring + LIVE_ROW * ((c->next_row + r) % LIVE_RING), 4 * LIVE_ROW);
  c->next_row += nrows;
  if (frame) c->seq = l->seq, l->frames_sent++;
  return head + rowbytes;
}

static int ws_write(struct lws *wsi, mr_live *l, conn *c) {
  pthread_mutex_lock(&l->mu);
  size_t n = l->frame_len ? build_message(l, c) : 0;
  int more = l->rows > c->next_row && c->next_row >= l->reset_row;
  int status = l->ended && !c->status_sent && !more && c->seq == l->seq;
  char text[MR_ERROR_MSG_MAX + 16];
  if (status) snprintf(text, sizeof text, "status %s", l->status);
  pthread_mutex_unlock(&l->mu);
  if (n == (size_t)-1) return -1;
  if (n) {
    if (lws_write(wsi, c->buf + LWS_PRE, n, LWS_WRITE_BINARY) < (int)n) return -1;
    if (more || status) lws_callback_on_writable(wsi);
    return 0;
  }
  if (status) {
    size_t k = strlen(text);
    if (reserve(c, k)) return -1;
    memcpy(c->buf + LWS_PRE, text, k);
    c->status_sent = 1;
    if (lws_write(wsi, c->buf + LWS_PRE, k, LWS_WRITE_TEXT) < (int)k) return -1;
  }
  return 0;
}

/* a text message from a page: a latency report, or a command for mr_live_poll */
static void ws_receive(mr_live *l, conn *c, const char *in, size_t len, int final) {
  if (c->nin + len >= sizeof c->in)
    c->nin = sizeof c->in; /* too long: dropped at the end */
  else
    memcpy(c->in + c->nin, in, len), c->nin += len;
  if (!final) return;
  size_t n = c->nin;
  c->nin = 0;
  if (n >= sizeof c->in) return;
  c->in[n] = '\0';
  pthread_mutex_lock(&l->mu);
  double seq, ms;
  if (!strncmp(c->in, "lat ", 4)) {
    if (sscanf(c->in + 4, "%lf %lf", &seq, &ms) == 2) l->latency[l->nlatency++ % LIVE_LATENCY] = ms;
  } else if (l->ncmds < LIVE_CMDS) {
    memcpy(l->cmds[l->ncmds++], c->in, n + 1);
    atomic_store(&l->pending, l->ncmds);
    l->commands++;
    pthread_cond_broadcast(&l->cv);
  } else {
    l->dropped_commands++;
  }
  pthread_mutex_unlock(&l->mu);
}

static void ws_open(struct lws *wsi, mr_live *l, conn *c) {
  memset(c, 0, sizeof *c);
  pthread_mutex_lock(&l->mu);
  c->next_row = l->rows > LIVE_RING ? l->rows - LIVE_RING : 0;
  l->viewers++, l->connections++;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
  lws_callback_on_writable(wsi);
}

static void ws_close(mr_live *l, conn *c) {
  pthread_mutex_lock(&l->mu);
  l->viewers--;
  pthread_mutex_unlock(&l->mu);
  free(c->buf);
  c->buf = NULL, c->cap = 0;
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len) {
  struct lws_context *ctx = lws_get_context(wsi);
  mr_live *l = lws_context_user(ctx);
  conn *c = user;
  switch (reason) {
  case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
    pthread_mutex_lock(&l->mu);
    int full = l->viewers >= LIVE_MAX_VIEWERS;
    pthread_mutex_unlock(&l->mu);
    return full || !allowed(wsi, l);
  }
  case LWS_CALLBACK_ESTABLISHED:
    return ws_open(wsi, l, c), 0;
  case LWS_CALLBACK_SERVER_WRITEABLE:
    return ws_write(wsi, l, c);
  case LWS_CALLBACK_RECEIVE:
    if (!lws_frame_is_binary(wsi))
      ws_receive(l, c, in, len, lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi));
    return 0;
  case LWS_CALLBACK_CLOSED:
    return ws_close(l, c), 0;
  case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
    lws_callback_on_writable_all_protocol(ctx, lws_get_protocol(wsi));
    return 0;
  default:
    return 0;
  }
}

static const struct lws_protocols protocols[] = {
    {"http", http_callback, sizeof(conn), 0, 0, NULL, 0},
    {"moreau-live", ws_callback, sizeof(conn), 4096, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0}};

/* ---- the thread ---- */

static void *serve(void *arg) {
  mr_live *l = arg;
  while (!atomic_load(&l->stop))
    if (lws_service(l->ctx, 0) < 0) break;
  return NULL;
}

/* 0 when host:port can be listened on (a probe bind, as libwebsockets binds: SO_REUSEADDR),
 * otherwise -1 with the reason in why; a host that is not an IPv4 address is left to
 * libwebsockets */
static int probe_listen(const char *host, int port, char *why, size_t size) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) return 0;
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, bad = 0;
  if (fd < 0) return 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&a, sizeof a)) {
    snprintf(why, size, "%s", strerror(errno));
    bad = -1;
  }
  close(fd);
  return bad;
}

static mr_status listen_error(const mr_live *l, const char *why, mr_error *err) {
  return mr_error_set(err, MR_ERR_IO, "live viewer: cannot listen on %s:%d: %s%s", l->host,
                      l->opt.port, why,
                      l->opt.port ? " (choose another port, or port 0 for a free one)" : "");
}

mr_status mr_live_server_start(mr_live *l, mr_error *err) {
  /* a port in use is found before libwebsockets tries (its failed start is not clean) */
  char why[256] = "not an address of this machine";
  if (probe_listen(l->host, l->opt.port, why, sizeof why)) return listen_error(l, why, err);
  struct lws_context_creation_info info;
  memset(&info, 0, sizeof info);
  info.port = l->opt.port;
  info.iface = l->host;
  info.protocols = protocols;
  info.user = l;
  info.gid = -1, info.uid = -1;
  info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
  lws_set_log_level(0, NULL);
  l->ctx = lws_create_context(&info);
  if (!l->ctx) return listen_error(l, "not an address of this machine", err);
  struct lws_vhost *vh = lws_get_vhost_by_name(l->ctx, "default");
  l->port = vh ? lws_get_vhost_listen_port(vh) : l->opt.port;
  snprintf(l->url, sizeof l->url, "http://%s:%d/", l->host, l->port);
  if (pthread_create(&l->thread, NULL, serve, l)) {
    lws_context_destroy(l->ctx);
    l->ctx = NULL;
    return mr_error_set(err, MR_ERR_NOMEM, "live viewer: cannot start the server thread");
  }
  l->thread_started = 1;
  return MR_OK;
}

void mr_live_server_wake(mr_live *l) {
  if (l->ctx) lws_cancel_service(l->ctx);
}

void mr_live_server_stop(mr_live *l) {
  if (l->thread_started) {
    atomic_store(&l->stop, 1);
    lws_cancel_service(l->ctx);
    pthread_join(l->thread, NULL);
    l->thread_started = 0;
  }
  if (l->ctx) lws_context_destroy(l->ctx);
  l->ctx = NULL;
}
