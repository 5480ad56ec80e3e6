/* moreau: rigid-body time-stepping simulation with a choice of frictional contact models. */
#ifndef MOREAU_MOREAU_H
#define MOREAU_MOREAU_H

#include "moreau/version.h"
#include "moreau/error.h"
#include "moreau/spatial.h"
#include "moreau/model.h"
#include "moreau/dynamics.h"
#include "moreau/collision.h"
#include "moreau/contact.h"
#include "moreau/urdf.h"
#include "moreau/assembly.h"
#include "moreau/world.h"
#include "moreau/scene.h"
#include "moreau/sim.h"
#include "moreau/sim_derivatives.h"
#include "moreau/control.h"
#include "moreau/actuator.h"
#include "moreau/mjcf.h"
#include "moreau/batch.h"
#include "moreau/live.h"
#include "moreau/qpcc.h"
#include "moreau/inverse.h"
#include "moreau/query.h"

#endif
