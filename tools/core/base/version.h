/* version.h - the PerfLens version, one place for every binary. */
#ifndef PL_VERSION_H
#define PL_VERSION_H

#ifndef PL_VERSION
#define PL_VERSION "0.1.0"
#endif

#endif
