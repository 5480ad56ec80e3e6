/* Reading an XML document with the first error libxml2 reports (xml_util.h). */
#include "io/xml_util.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>

/* the first error of a parse */
typedef struct {
  int seen, line;
  char *msg;
  size_t cap;
} first_error;

#if LIBXML_VERSION >= 21200
static void on_xml_error(void *user, const xmlError *e) {
#else
static void on_xml_error(void *user, xmlErrorPtr e) {
#endif
  xmlParserCtxt *pc = user;
  first_error *first = pc ? pc->_private : NULL;
  if (!first || first->seen || !e) return;
  first->seen = 1;
  first->line = e->line;
  snprintf(first->msg, first->cap, "%s", e->message ? e->message : "not well-formed");
}

mr_status mr_xml_read(const char *text, size_t len, xmlDoc **doc, int *line, char *msg,
                      size_t cap) {
  *doc = NULL, *line = 0;
  if (cap) msg[0] = '\0';
  xmlParserCtxt *pc = xmlNewParserCtxt();
  if (!pc) return MR_ERR_NOMEM;
  first_error first = {0, 0, msg, cap};
  if (len <= INT_MAX) {
    pc->_private = &first;
    pc->sax->serror = on_xml_error;
    int flags = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES;
    *doc = xmlCtxtReadMemory(pc, text, (int)len, NULL, NULL, flags);
    if (*doc && !pc->wellFormed) xmlFreeDoc(*doc), *doc = NULL;
    if (!*doc && !first.seen) {
      first.line = pc->lastError.line;
      snprintf(msg, cap, "%s", pc->lastError.message ? pc->lastError.message : "not well-formed");
    }
  }
  xmlFreeParserCtxt(pc);
  if (*doc) return MR_OK;
  *line = first.line;
  size_t n = strlen(msg);
  while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
    msg[--n] = '\0';
  return MR_ERR_PARSE;
}
