/* The version of moreau: the library, the moreau command, moreau.pc and the CMake package
 * (the Makefile and CMakeLists.txt read it from here). */
#ifndef MOREAU_VERSION_H
#define MOREAU_VERSION_H

#define MR_VERSION_MAJOR 0
#define MR_VERSION_MINOR 1
#define MR_VERSION_PATCH 0
#define MR_VERSION_STRING "0.1.0" /* MAJOR.MINOR.PATCH */

#endif
