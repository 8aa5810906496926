/* fuzz_check.h: FUZZ_CHECK(cond), the invariant check of the fuzz targets
 * (C and C++): prints the failed condition and aborts, so libFuzzer saves the
 * input as a crash and the replay test fails on it. */
#ifndef LOGSINK_FUZZ_CHECK_H
#define LOGSINK_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      abort();                                                                      \
    }                                                                               \
  } while (0)

#endif
