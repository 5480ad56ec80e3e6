#!/bin/sh
# Load time of replay pages in headless Chromium (docs/viewer.md): writes the pages of the demo,
# of 10 s of Solo-12 trotting at 1 kHz, of the reference Solo-12 with its visual meshes for 10 s
# at 50 frames per second (when ../shared/reference is there; MOREAU_SHARED overrides ../shared)
# and of 100 bodies at 1 kHz, opens each N times (default
# 5) in a fresh headless Chromium and prints the page size and the median of the timings the
# page logs in its ready line (load_ms from navigation start, and its parts), and the CPU time
# (user + system, all Chromium processes) of a load less that of loading an empty page, which
# depends much less than wall time on what else the machine runs.
# The 100 bodies (250 contacts once landed) step at about 25 ms of CPU each here, so 10 s of
# them would take minutes to simulate: their page records 1 s with every step a frame (--fps 0),
# 1000 frames, more frames and contacts than 10 s at 60 frames per second (600), and 1000 step
# figures instead of 10000 (0.2 MB of the page less).
#   usage: viewer/measure.sh            (from the repository root, after make)
set -e
MOREAU=${MOREAU:-build/moreau}
N=${N:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# 100 free bodies, boxes and spheres alternating on a 10 x 10 grid, dropped on a halfspace
{
  echo "timestep: 0.001"
  echo "duration: 10.0"
  echo "bodies:"
  echo "  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: 0.6}]}"
  for i in 0 1 2 3 4 5 6 7 8 9; do
    for j in 0 1 2 3 4 5 6 7 8 9; do
      x=$(echo "($i - 4.5) * 0.3" | bc -l); y=$(echo "($j - 4.5) * 0.3" | bc -l)
      z=$(echo "0.2 + 0.05 * (($i + $j) % 4)" | bc -l)
      if [ $(( (i + j) % 2 )) = 0 ]; then g="{type: box, size: [0.15, 0.15, 0.15]}"
      else g="{type: sphere, radius: 0.08}"; fi
      echo "  - {name: b${i}${j}, mass: 1.0, position: [$x, $y, $z], geoms: [$g]}"
    done
  done
} > "$dir/bodies100.yaml"

"$MOREAU" view scenes/demo.yaml -o "$dir/demo.html" >/dev/null
"$MOREAU" view scenes/b9_solo_trot.yaml --duration 10 -o "$dir/solo10.html" >/dev/null
"$MOREAU" view "$dir/bodies100.yaml" --duration 1 --fps 0 -o "$dir/bodies100.html" >/dev/null
pages="demo solo10 bodies100"
REF=${MOREAU_SHARED:-../shared}/reference/example-robot-data
if [ -d "$REF" ]; then
  printf 'timestep: 0.001\nduration: 10\nbodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\nrobots:\n  - {name: solo, urdf: %s/robots/solo_description/robots/solo12.urdf, floating: true}\n' \
    "$(cd "$REF" && pwd)" > "$dir/solo_ref.yaml"
  "$MOREAU" run scenes/b9_solo_trot.yaml --duration 10 --quiet --out "$dir/walk.csv" \
    --contacts "$dir/walk_c.csv"
  "$MOREAU" view "$dir/walk.csv" --scene "$dir/solo_ref.yaml" --contacts "$dir/walk_c.csv" \
    --fps 50 -o "$dir/soloref.html" >/dev/null
  pages="demo solo10 soloref bodies100"
fi

# the median of the numbers on stdin
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# one headless load of $1 (a file name in $dir): the page's console lines to $dir/out, the CPU
# seconds of the browser (all its processes) appended to $dir/cpu
load() {
  prof=$(mktemp -d)
  /usr/bin/time -a -o "$dir/cpu" -f "%U %S" chromium --headless --no-sandbox \
    --use-angle=swiftshader --enable-unsafe-swiftshader --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$prof" \
    --enable-logging=stderr --window-size=1280,800 --screenshot="$dir/shot.png" \
    "file://$dir/$1" > "$dir/out" 2>&1 || true
  rm -rf "$prof"
}

echo "<!DOCTYPE html><title>empty</title>" > "$dir/empty.html"
: > "$dir/cpu"
k=0
while [ $k -lt "$N" ]; do load empty.html; k=$((k + 1)); done
empty_cpu=$(awk '{print $1 + $2}' "$dir/cpu" | median)

printf "%-10s %9s %8s %10s %9s %8s %8s\n" page size_kB load_ms decode_ms build_ms draw_ms cpu_s
for p in $pages; do
  : > "$dir/$p.log"
  : > "$dir/cpu"
  k=0
  while [ $k -lt "$N" ]; do
    load "$p.html"
    grep "moreau-viewer: ready" "$dir/out" >> "$dir/$p.log" || true
    k=$((k + 1))
  done
  field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$dir/$p.log" | median; }
  cpu=$(awk -v e="$empty_cpu" '{print $1 + $2 - e}' "$dir/cpu" | median)
  printf "%-10s %9d %8s %10s %9s %8s %8s\n" "$p" $(( $(stat -c %s "$dir/$p.html") / 1024 )) \
    "$(field load_ms)" "$(field decode_ms)" "$(field build_ms)" "$(field draw_ms)" "$cpu"
done
echo "CPU of an empty page's load: $empty_cpu s"
