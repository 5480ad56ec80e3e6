#!/bin/sh
# Every file of src/ includes only headers of its own layer or of a lower one (docs/architecture.md):
#   core < dynamics < collision < contact < model < integrate < control < io < viewer < cli
# A public header belongs to the layer that implements it, and follows the same rule. Prints each
# include that runs up a layer and exits 1 when there is one.
cd "$(dirname "$0")/.." || exit 2
rank() {
  case "$1" in
  core | spatial.h | error.h | version.h) echo 0 ;;
  dynamics | model.h | dynamics.h | query.h) echo 1 ;;
  collision | collision.h) echo 2 ;;
  contact | contact.h | assembly.h) echo 3 ;;
  model | world.h) echo 4 ;;
  integrate | sim.h | control.h | batch.h | sim_derivatives.h | actuator.h) echo 5 ;;
  control | mpc.h | qpcc.h | inverse.h) echo 6 ;;
  io | scene.h | urdf.h | mjcf.h | runner.h) echo 7 ;;
  viewer | live.h) echo 8 ;;
  cli | moreau.h) echo 9 ;;
  *) echo unknown ;;
  esac
}
bad=0
for f in $(find src include/moreau -name '*.[ch]' | sort); do
  case "$f" in
  include/*) own=$(rank "$(basename "$f")") ;;
  *) own=$(rank "$(echo "$f" | cut -d/ -f2)") ;;
  esac
  for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
    case "$inc" in
    moreau/*) key=${inc#moreau/} ;;
    */*) key=${inc%%/*} ;;
    *) continue ;; # a file beside it (generated assets)
    esac
    r=$(rank "$key")
    if [ "$r" = unknown ] || [ "$own" = unknown ]; then
      echo "$f: $inc: layer unknown (add it to tools/check_layers.sh)"
      bad=1
    elif [ "$r" -gt "$own" ]; then
      echo "$f includes $inc, a layer above its own"
      bad=1
    fi
  done
done
[ $bad = 0 ] && echo "layers: no file of src/ or include/moreau/ includes a header of a layer above its own"
exit $bad
