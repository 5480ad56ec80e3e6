/* Packed arrays and JSON pieces of the viewer's pages (viewer.h).
 *
 * A packed array is the little-endian bytes of n values, optionally shuffled (the first bytes of
 * every value, then the second bytes, ...: the exponent bytes of floats that change slowly
 * become long runs), compressed by zlib's deflate at its best level (RFC 1950 stream, which the
 * page's DecompressionStream("deflate") reads), in base64. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "viewer/viewer.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void mr_base64_write(FILE *f, const unsigned char *d, size_t n) {
  char out[4 * 256];
  size_t k = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)d[i] << 16;
    if (i + 1 < n) v |= (uint32_t)d[i + 1] << 8;
    if (i + 2 < n) v |= d[i + 2];
    out[k++] = b64[v >> 18 & 63], out[k++] = b64[v >> 12 & 63];
    out[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
    out[k++] = i + 2 < n ? b64[v & 63] : '=';
    /* flush whole groups of four */
    if (k == sizeof out) fwrite(out, 1, k, f), k = 0;
  }
  fwrite(out, 1, k, f);
}

void mr_json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&')
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

void mr_json_numbers(FILE *f, const double *x, int n) {
  fputc('[', f);
  for (int k = 0; k < n; ++k)
    fprintf(f, k ? ",%.9g" : "%.9g", isfinite(x[k]) ? x[k] : 0.0);
  fputc(']', f);
}

static size_t type_size(mr_pack_type t) {
  return t == MR_PACK_U16 ? 2 : 4;
}

static const char *type_name(mr_pack_type t) {
  static const char *const names[] = {"f32", "i32", "u16", "u32"};
  return names[t];
}

/* the values' little-endian bytes, shuffled into byte planes when asked */
static unsigned char *le_bytes(const void *x, size_t n, size_t w, int shuffle) {
  unsigned char *b = malloc(n * w + 1);
  if (!b) return NULL;
  const unsigned char *src = x;
  for (size_t i = 0; i < n; ++i) {
    uint32_t v;
    if (w == 2) {
      uint16_t h;
      memcpy(&h, src + i * w, 2);
      v = h;
    } else {
      memcpy(&v, src + i * w, 4);
    }
    for (size_t k = 0; k < w; ++k) {
      unsigned char byte = (unsigned char)(v >> (8 * k));
      b[shuffle ? k * n + i : i * w + k] = byte;
    }
  }
  return b;
}

int mr_pack_write(FILE *f, const void *x, size_t n, mr_pack_type t, int shuffle) {
  size_t w = type_size(t), len = n * w;
  unsigned char *raw = le_bytes(x, n, w, shuffle);
  uLongf zlen = compressBound((uLong)len);
  unsigned char *z = raw ? malloc(zlen) : NULL;
  if (!z || compress2(z, &zlen, raw, (uLong)len, Z_BEST_COMPRESSION) != Z_OK) {
    free(raw), free(z);
    return -1;
  }
  fprintf(f, "{\"t\":\"%s\",\"n\":%zu,\"s\":%d,\"z\":\"", type_name(t), n, shuffle ? 1 : 0);
  mr_base64_write(f, z, zlen);
  fputs("\"}", f);
  free(raw), free(z);
  return 0;
}
