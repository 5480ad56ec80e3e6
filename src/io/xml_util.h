/* Reading an XML document with libxml2 for the URDF and MJCF loaders (xml_util.c): no network
 * access, no messages printed, and the first error libxml2 reports (it keeps only the last one,
 * often a consequence of the first). */
#ifndef MOREAU_IO_XML_UTIL_H
#define MOREAU_IO_XML_UTIL_H

#include <stddef.h>

#include <libxml/tree.h>

#include "moreau/error.h"

/* Parse len bytes of text into *doc (the caller frees it with xmlFreeDoc). MR_ERR_PARSE for a
 * document that is not well-formed (or longer than INT_MAX bytes), with the first error's line
 * into *line and its message, without libxml2's trailing newline, into msg (cap bytes);
 * MR_ERR_NOMEM when libxml2 cannot allocate its parser. *doc is NULL on any error. */
mr_status mr_xml_read(const char *text, size_t len, xmlDoc **doc, int *line, char *msg, size_t cap);

#endif
