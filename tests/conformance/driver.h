/* driver.h: what a conformance driver written over liblogsink provides
 * (README.md, "The driver protocol"): the calls of one language's API for
 * each command. driver_main.c reads the commands and answers them; the C
 * driver (driver_c.c) and the C++ driver (driver_cxx.cc) each fill this
 * table with their own calls. */
#ifndef LOGSINK_CONFORMANCE_DRIVER_H
#define LOGSINK_CONFORMANCE_DRIVER_H

#include <logsink/logsink.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct conformance_calls {
  /* The catalogue's records, in its order (README.md, "The catalogue"). */
  void (*catalogue)(ls_client *c);
  /* "level I" at syslog level I (0..7). */
  void (*level)(ls_client *c, int i);
  /* "probe" at syslog level I (0..7). */
  void (*probe)(ls_client *c, int i);
  /* The record with named fields (README.md, "Fields"). */
  void (*fields)(ls_client *c);
  /* "TAG I" at info. */
  void (*numbered)(ls_client *c, const char *tag, int i);
} conformance_calls;

/* Runs the driver: argv as README.md says, commands from stdin. */
int conformance_main(int argc, char **argv, const conformance_calls *calls);

#ifdef __cplusplus
}
#endif

#endif
