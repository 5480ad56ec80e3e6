#!/bin/sh
# The screenshots of docs/viewer/ (docs/viewer.md), from the repository root after make:
# replay pages in headless Chromium (--screenshot) and a live session driven by
# viewer/test/live.mjs. The reference robots (a1, Solo-12 with visual meshes) come from
# ../shared/reference (MOREAU_SHARED overrides ../shared).
#   usage: viewer/shots.sh
set -e
MOREAU=${MOREAU:-build/moreau}
REF=${MOREAU_SHARED:-../shared}/reference/example-robot-data
out=docs/viewer
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# shot PAGE HASH PNG: the page at 1280 x 800
shot() {
  prof=$(mktemp -d)
  chromium --headless --no-sandbox --use-angle=swiftshader --enable-unsafe-swiftshader \
    --disable-background-networking --disable-component-update --disable-sync --no-first-run \
    --user-data-dir="$prof" --window-size=1280,800 --screenshot="$3" "file://$1#$2" \
    >/dev/null 2>&1
  rm -rf "$prof"
}

"$MOREAU" view scenes/demo.yaml -o "$dir/demo.html" >/dev/null
shot "$dir/demo.html" "t=0.5" "$out/demo.png"
"$MOREAU" view scenes/talos_stand.yaml -o "$dir/talos.html" >/dev/null
shot "$dir/talos.html" "t=1" "$out/talos_stand.png"
"$MOREAU" view scenes/b10_solo_trot_bumpy.yaml --duration 2.1 -o "$dir/bumpy.html" >/dev/null
shot "$dir/bumpy.html" "t=2" "$out/bumpy.png"

if [ -d "$REF" ]; then
  printf 'timestep: 0.001\nduration: 10\nbodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\nrobots:\n  - {name: solo, urdf: %s/robots/solo_description/robots/solo12.urdf, floating: true}\n' \
    "$(cd "$REF" && pwd)" > "$dir/solo_ref.yaml"
  "$MOREAU" run scenes/b9_solo_trot.yaml --duration 10 --quiet --out "$dir/walk.csv" \
    --contacts "$dir/walk_c.csv"
  "$MOREAU" view "$dir/walk.csv" --scene "$dir/solo_ref.yaml" --contacts "$dir/walk_c.csv" \
    --fps 50 -o "$dir/solo_ref.html" >/dev/null
  shot "$dir/solo_ref.html" "t=3" "$out/solo12_visual.png"
  printf 'timestep: 0.001\nduration: 0.5\nbodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\nrobots:\n  - {name: a1, urdf: %s/robots/a1_description/urdf/a1.urdf, srdf: %s/robots/a1_description/srdf/a1.srdf, floating: true, posture: standing, pd: {kp: 150, kd: 3}}\n' \
    "$(cd "$REF" && pwd)" "$(cd "$REF" && pwd)" > "$dir/a1.yaml"
  "$MOREAU" view "$dir/a1.yaml" -o "$dir/a1.html" >/dev/null 2>&1
  shot "$dir/a1.html" "t=0.2" "$out/a1_fallback.png"
fi

# a live session paused at t = 2.5 s
"$MOREAU" run scenes/b9_solo_trot.yaml --live --port 0 --duration 600 > "$dir/live.txt" 2>&1 &
run=$!
until grep -q "live viewer:" "$dir/live.txt"; do sleep 0.2; done
url=$(sed -n 's/live viewer: \(http[^ ]*\).*/\1/p' "$dir/live.txt")
node viewer/test/live.mjs "$url" shot 2.5 "$out/live.png" >/dev/null
kill -INT "$run"
wait "$run" || true
