#!/usr/bin/env bash
# The experiments of the contact-model study (EXPERIMENTS.md §B, B1–B11): runs the scenes with
# build/moreau, writes CSV tables to docs/results/ and draws PNG plots with gnuplot.
#
#   experiments/run.sh [B1 B2 ...]     (default: every experiment; run from anywhere)
#
# Tools: bash, awk, gnuplot (make experiments installs gnuplot-nox). Environment: MOREAU (the
# moreau binary, default build/moreau), OUT (default docs/results).
set -euo pipefail

cd "$(dirname "$0")/.."
MOREAU=${MOREAU:-build/moreau}
OUT=${OUT:-docs/results}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
command -v gnuplot >/dev/null || { echo "run.sh: gnuplot not found (make experiments installs gnuplot-nox)" >&2; exit 1; }

# every solver except the soft baseline (compared on the rigid experiments)
RIGID="lcp-pgs ccp-pgs ccp-admm ccp-newton raisim raisim-ds ncp-pgs ncp-admm ncp-stagproj ncp-hybrid"

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }

# run SCENE SOLVER TRAJ [ARGS...]: one quiet run, trajectory to TRAJ, nothing else kept
run() {
  local scene=$1 solver=$2 traj=$3
  shift 3
  "$MOREAU" run "$scene" --solver "$solver" --out "$traj" --contacts /dev/null \
    --summary "$TMP/summary.json" --quiet "$@"
}

# cols FILE NAME...: the named columns of a CSV (header included), comma separated
cols() {
  local file=$1
  shift
  awk -F, -v want="$*" 'NR == 1 { n = split(want, w, " ");
      for (i = 1; i <= NF; i++) idx[$i] = i;
      for (j = 1; j <= n; j++) if (!(w[j] in idx)) { print "no column " w[j] > "/dev/stderr"; exit 1 } }
    { line = $(idx[w[1]]); for (j = 2; j <= n; j++) line = line "," $(idx[w[j]]); print line }' "$file"
}

# json_num FILE KEY: a number of a summary file
json_num() { tr ',{}' '\n\n\n' <"$1" | awk -F: -v k="\"$2\"" '$1 ~ k { gsub(/ /, "", $2); print $2 }'; }

# curves TEMPLATE NAME...: gnuplot plot clauses, one per NAME (replacing @ in TEMPLATE), comma separated
curves() {
  local tpl=$1 sep="" n
  shift
  for n in "$@"; do
    printf '%s%s' "$sep" "${tpl//@/$n}"
    sep=", "
  done
}

# plot SCRIPT: run gnuplot on a script read from stdin, in OUT, with the common settings
plot() {
  local term="pngcairo size 1000,640 font 'sans,10'"
  local colours="#9467bd #2ca02c #17becf #e377c2 #ff7f0e #8c564b #d62728 #000000 #1f77b4 #bcbd22" i=1 c lt=""
  for c in $colours; do lt="$lt set linetype $i lc rgb '$c';"; i=$((i + 1)); done
  gnuplot -e "set terminal $term noenhanced" -e "set datafile separator ','" -e "$lt" \
    -e "pick(c, s, v) = strcol(c) eq s ? v : NaN" \
    -e "cd '$OUT'" - 2>"$TMP/gnuplot.err" || { cat "$TMP/gnuplot.err" >&2; return 1; }
}

# ---------------------------------------------------------------------------------------------
# B1 sliding cube (a = 0.2 m, m = 1 kg, mu = 0.4, 4 corner contacts): energy vs the analytical
# E(t) = ½ m max(v0 − μ g t, 0)² (A3), plus the rise of the cube (CCP: contact at a distance).
# The plotted energy is kinetic + m g (z − z0): the cube's own, zero at rest on the ground.
b1() {
  log "B1 sliding cube"
  local summary=$OUT/b1_summary.csv
  echo "scene,v0,solver,max_abs_dE_J,E_at_tstar_half_J,E_ana_at_tstar_half_J,max_rise_m,stop_time_s,distance_m,distance_ana_m" >"$summary"
  local shape v0 dur solver f
  for shape in spheres box; do
    for v0 in 1 3; do
      dur=$([ "$v0" = 1 ] && echo 0.4 || echo 1.0)
      for solver in $RIGID; do
        f=$OUT/b1_${shape}_${v0}ms_$solver.csv
        run "scenes/b1_sliding_cube_${shape}_${v0}ms.yaml" "$solver" "$TMP/b1.csv" --duration "$dur"
        # t, E (cube, J), E analytical, rise z − z0 (m), vx
        cols "$TMP/b1.csv" t energy cube/root_joint_z cube/root_joint_x cube/root_joint_vx | awk -F, -v v0="$v0" '
          NR == 1 { print "t,E,E_ana,rise,x,vx"; next }
          { v = v0 - 0.4 * 9.81 * $1; if (v < 0) v = 0;
            printf "%s,%.10g,%.10g,%.6g,%.8g,%.8g\n", $1, $2 - 9.81 * 0.1, 0.5 * v * v, $3 - 0.1, $4, $5 }' >"$f"
        awk -F, -v shape="$shape" -v v0="$v0" -v s="$solver" '
          NR == 1 { next }
          { d = $2 - $3; if (d < 0) d = -d; if (d > md) md = d; if ($4 > mr) mr = $4;
            th = v0 / (0.4 * 9.81) / 2; if (!eh && $1 >= th - 1e-9) { eh = $2; ea = $3 }
            if (!stop && $6 < 1e-6) stop = $1; x = $5 }
          END { printf "%s,%s,%s,%.3g,%.5f,%.5f,%.3g,%s,%.5f,%.5f\n", shape, v0, s, md, eh, ea, mr,
                  stop ? stop : "none", x, v0 * v0 / (2 * 0.4 * 9.81) }' "$f" >>"$summary"
      done
    done
  done
  # oblique slide (A4 / B1 remark): v0 = 1 m/s at 30° to x; lateral drift from the line of v0
  local oblique=$OUT/b1_oblique.csv c s
  echo "solver,x_m,y_m,lateral_drift_m,direction_deg" >"$oblique"
  c=0.86602540378443865
  s=0.5
  sed "s/linear_velocity: \[1, 0, 0\]/linear_velocity: [$c, $s, 0]/" \
    scenes/b1_sliding_cube_spheres_1ms.yaml >"$TMP/b1_oblique.yaml"
  for solver in $RIGID; do
    run "$TMP/b1_oblique.yaml" "$solver" "$TMP/b1.csv" --duration 0.4
    tail -n 1 "$TMP/b1.csv" | awk -F, -v s="$solver" -v c="$c" -v sn="$s" '
      { x = $2; y = $3; d = -sn * x + c * y;
        printf "%s,%.6f,%.6f,%.3g,%.3f\n", s, x, y, d, atan2(y, x) * 180 / 3.14159265358979 }' \
      >>"$oblique"
  done
  # the LCP pyramid with k facets (solver.pyramid_facets): the drift shrinks as 1/k
  local k
  for k in 8 16 32 64; do
    run "$TMP/b1_oblique.yaml" lcp-pgs "$TMP/b1.csv" --duration 0.4 --set "solver.pyramid_facets=$k"
    tail -n 1 "$TMP/b1.csv" | awk -F, -v s="lcp-pgs k=$k" -v c="$c" -v sn="$s" '
      { x = $2; y = $3; d = -sn * x + c * y;
        printf "%s,%.6f,%.6f,%.3g,%.3f\n", s, x, y, d, atan2(y, x) * 180 / 3.14159265358979 }' \
      >>"$oblique"
  done
  for v0 in 1 3; do
    plot <<GP
# four rows of panels: a taller page
set terminal pngcairo size 1000,860 font 'sans,10' noenhanced
set output 'b1_energy_${v0}ms.png'
set multiplot layout 4,3 title 'B1 sliding cube (8 corner spheres, 4 contacts), v0 = $v0 m/s: energy (J) vs t (s); black: analytical'
set key off
$(for solver in $RIGID; do
      echo "set title '$solver'; plot 'b1_spheres_${v0}ms_$solver.csv' u 1:2 every ::1 w l lw 2 lc rgb '#d62728', '' u 1:3 every ::1 w l dt 2 lc rgb 'black'"
    done)
unset multiplot
set terminal pngcairo size 1000,640 font 'sans,10' noenhanced
set key on
set output 'b1_rise_${v0}ms.png'
set title 'B1 sliding cube, v0 = $v0 m/s: height of the cube above its resting height'
set xlabel 't (s)'; set ylabel 'z - z0 (m)'; set key top right
plot $(curves "'b1_spheres_${v0}ms_@.csv' u 1:4 every ::1 w l lw 2 t '@'" $RIGID)
GP
  done
  b1_path
}

# ---------------------------------------------------------------------------------------------
# B1, the paper's Fig 9: the x-y path of the cube sliding obliquely (v0 = 1 m/s at 30° to x, the
# 8-sphere cube) under every solver, against the straight line of v0 it keeps in the analytical
# solution (Coulomb friction opposes the sliding velocity, so the path cannot bend).
b1_path() {
  log "B1 x-y path of the oblique slide (Fig 9)"
  local solver
  sed "s/linear_velocity: \[1, 0, 0\]/linear_velocity: [0.86602540378443865, 0.5, 0]/" \
    scenes/b1_sliding_cube_spheres_1ms.yaml >"$TMP/b1_oblique.yaml"
  for solver in $RIGID; do
    run "$TMP/b1_oblique.yaml" "$solver" "$TMP/b1.csv" --duration 0.4
    cols "$TMP/b1.csv" t cube/root_joint_x cube/root_joint_y >"$OUT/b1_path_$solver.csv"
  done
  plot <<GP
set output 'b1_path.png'
set title 'B1 oblique slide (v0 = 1 m/s at 30 deg, mu = 0.4): the cube path, y vs x (m); black: the line of v0'
set xlabel 'x (m)'; set ylabel 'y (m)'
set size ratio -1
set key outside right
plot $(curves "'b1_path_@.csv' u 2:3 every ::1 w l lw 2 t '@'" $RIGID), [0:0.12] x * 0.57735026918962573 w l dt 2 lc rgb 'black' t 'v0 line'
GP
}

# ---------------------------------------------------------------------------------------------
# B2 dragged cube (8 corner spheres, 4 contacts), F = 20 t N along x: tangential velocity and the
# y-components of the four contact forces (internal forces: they sum to zero by symmetry).
# Analytical: stick until 20 t = μ m g (t0 = 0.1962 s), then v(t) = 10 (t² − t0²) − μ g (t − t0).
b2() {
  log "B2 dragged cube"
  local summary=$OUT/b2_summary.csv solver f
  echo "solver,max_abs_fy_stick_N,max_abs_fy_slide_N,slip_onset_s,vx_end_mps,vx_end_ana_mps,x_end_m,max_eps_abs_stick_N,max_eps_abs_slide_N" >"$summary"
  for solver in $RIGID; do
    f=$OUT/b2_$solver.csv
    "$MOREAU" run scenes/b2_dragged_cube_spheres.yaml --solver "$solver" --out "$TMP/b2.csv" \
      --contacts "$TMP/b2c.csv" --summary "$TMP/summary.json" --quiet
    # forces per corner (geom1 = cube/0..3), one row per recorded time
    awk -F, 'NR == 1 { next } { split($3, g, "/"); fy[$1 SUBSEP g[2]] = $16; if (!($1 in seen)) {
        seen[$1] = 1; order[++n] = $1 } }
      END { for (k = 1; k <= n; k++) { t = order[k]; line = t;
          for (c = 0; c < 4; c++) line = line "," ((t SUBSEP c) in fy ? fy[t SUBSEP c] : 0);
          print line } }' "$TMP/b2c.csv" >"$TMP/b2f.csv"
    cols "$TMP/b2.csv" t cube/root_joint_x cube/root_joint_vx cube/root_joint_vy eps_abs | awk -F, -v forces="$TMP/b2f.csv" '
      BEGIN { while ((getline line < forces) > 0) { split(line, a, ","); f[a[1]] = substr(line, length(a[1]) + 2) } }
      NR == 1 { print "t,x,vx,vy,fy0,fy1,fy2,fy3,vx_ana,eps_abs"; next }
      { t0 = 0.4 * 9.81 / 20; va = $1 > t0 ? 10 * ($1 * $1 - t0 * t0) - 0.4 * 9.81 * ($1 - t0) : 0;
        print $1 "," $2 "," $3 "," $4 "," ($1 in f ? f[$1] : "0,0,0,0") "," va "," $5 }' >"$f"
    awk -F, -v s="$solver" 'NR == 1 { next }
      { m = 0; for (c = 5; c <= 8; c++) { a = $c < 0 ? -$c : $c; if (a > m) m = a }
        if ($1 >= 0.05 && $1 <= 0.15 && m > ms) ms = m; if ($1 >= 0.4 && m > ml) ml = m;
        if (!on && $3 > 1e-4) on = $1; vx = $3; va = $9; x = $2
        if ($1 < 0.19 && $10 > es) es = $10; if ($1 >= 0.21 && $10 > el) el = $10 }
      END { printf "%s,%.4g,%.4g,%s,%.4f,%.4f,%.4f,%.3g,%.3g\n", s, ms, ml, on ? on : "none", vx, va, x,
              es, el }' \
      "$f" >>"$summary"
  done
  plot <<GP
# four rows of panels: a taller page
set terminal pngcairo size 1000,860 font 'sans,10' noenhanced
set output 'b2_forces_y.png'
set multiplot layout 4,3 title 'B2 dragged cube: y-components of the 4 contact forces (N) vs t (s); stick until t = 0.196 s'
set key off
$(for solver in $RIGID; do
    echo "set title '$solver'; set yrange [-1.5:1.5]; plot for [c=5:8] 'b2_$solver.csv' u 1:c every ::1 w l lw 1.5"
  done)
unset multiplot
set terminal pngcairo size 1000,640 font 'sans,10' noenhanced
set key on
set output 'b2_velocity.png'
set title 'B2 dragged cube: tangential velocity v_x (m/s); black: analytical'
set xlabel 't (s)'; set ylabel 'v_x (m/s)'; set key top left; set autoscale y
plot $(curves "'b2_@.csv' u 1:3 every ::1 w l lw 1.5 t '@'" $RIGID), \
  'b2_ncp-pgs.csv' u 1:9 every ::1 w l dt 2 lw 2 lc rgb 'black' t 'analytical'
set output 'b2_velocity_error.png'
set title 'B2: v_x - analytical (m/s)'
set ylabel 'v_x - v_ana (m/s)'
plot $(curves "'b2_@.csv' u 1:(column(3)-column(9)) every ::1 w l lw 1.5 t '@'" $RIGID)
set output 'b2_eps_abs.png'
set multiplot layout 1,2 title 'B2 dragged cube: NCP criterion eps_abs (N) of each step; stick until t = 0.196 s (RaiSim note, Fig. 4 bottom right)'
set logscale y; set format y '%.0e'; set ylabel 'eps_abs (N)'; set yrange [1e-12:1e7]; set key bottom right font ',8'
set title 'raisim, raisim-ds, ncp-pgs (the note''s figure)'
plot 'b2_raisim.csv' u 1:(column(10) > 0 ? column(10) : 1e-12) every ::1 w l lw 1.5 lt 5 t 'raisim', \
  'b2_raisim-ds.csv' u 1:(column(10) > 0 ? column(10) : 1e-12) every ::1 w l lw 1.5 lt 6 t 'raisim-ds', \
  'b2_ncp-pgs.csv' u 1:(column(10) > 0 ? column(10) : 1e-12) every ::1 w l lw 1.5 lt 7 t 'ncp-pgs'
set title 'every solver'
plot $(curves "'b2_@.csv' u 1:(column(10) > 0 ? column(10) : 1e-12) every ::1 w l lw 1.5 t '@'" $RIGID)
unset multiplot
GP
}

# ---------------------------------------------------------------------------------------------
# B3/B4 consistency in Δt: the dragged cube of B2 over 0.5 s (stick, then slide) at Δt from 1e-4
# to 1e-2 against a Δt = 1e-5 reference. Errors: the paper's integral consistency error
# Σ_k ‖q(t_k) − q̄(t_k)‖ Δt over the steps t_k = k Δt of the coarse run (q the 7 coordinates of
# the cube's free-flyer, position and quaternion; q̄ the reference at the same time, every
# t_k being a step of the reference), and the largest deviation over the times t = 0.01 k
# (common to every Δt) of the position x and of the velocity v_x. The energy is the cube's
# kinetic + m g (z − z0); its error is taken at t = 0.5 s against the reference's.
DTS="1e-4 2e-4 5e-4 1e-3 2e-3 5e-3 1e-2"
B3_SOLVERS="ncp-pgs ncp-admm ncp-stagproj lcp-pgs ccp-pgs raisim"

# b23_run SOLVER DT OUTFILE [ARGS...]: the B2 scene over 0.5 s; t, x, y, z, qx, qy, qz, qw,
# v_x and the cube's energy (J, zero at rest) of every step
b23_run() {
  local solver=$1 dt=$2 out=$3
  shift 3
  run scenes/b2_dragged_cube_spheres.yaml "$solver" "$TMP/b3.csv" --dt "$dt" --duration 0.5 "$@"
  cols "$TMP/b3.csv" t cube/root_joint_x cube/root_joint_y cube/root_joint_z cube/root_joint_qx \
    cube/root_joint_qy cube/root_joint_qz cube/root_joint_qw cube/root_joint_vx energy |
    awk -F, -v OFS=, 'NR > 1 { $10 = sprintf("%.10g", $10 - 9.81 * 0.1); print }' >"$out"
}

# errors REF RUN DT: the integral consistency error Σ ‖q − q̄‖ Δt (m s), max |x − x_ref| and
# max |v − v_ref| over the times 0.01 k, the energy at 0.5 s and the reference's. A reference
# row is found by its step number at Δt = 1e-5.
errors() {
  awk -F, -v dt="$3" 'NR == FNR { k = int($1 / 1e-5 + 0.5); r[k] = $0; if (k > last) last = k; next }
    { k = int($1 / 1e-5 + 0.5); if (!(k in r)) next;
      split(r[k], q, ",")
      d2 = 0; for (i = 2; i <= 8; i++) d2 += ($i - q[i]) ^ 2; integral += sqrt(d2) * dt;
      s = $1 / 0.01; if (s - int(s + 0.5) < 1e-6 && int(s + 0.5) - s < 1e-6) {
        a = $2 - q[2]; if (a < 0) a = -a; if (a > ex) ex = a;
        b = $9 - q[9]; if (b < 0) b = -b; if (b > ev) ev = b }
      if (k == last) { e = $10; eref = q[10] } }
    END { printf "%.4g,%.4g,%.4g,%.8g,%.8g", integral, ex, ev, e, eref }' "$1" "$2"
}

# slope CSV COLUMN: least-squares slope of log(error) vs log(Δt) per solver (column 1 solver, 2 Δt)
slopes() {
  awk -F, -v c="$2" 'NR > 1 && $c > 0 { s = $1; x = log($2); y = log($c); n[s]++; sx[s] += x;
      sy[s] += y; sxx[s] += x * x; sxy[s] += x * y }
    END { for (s in n) printf "%s %.2f\n", s, (n[s] * sxy[s] - sx[s] * sy[s]) / (n[s] * sxx[s] - sx[s] * sx[s]) }' "$1" | sort
}

B3_HEADER="solver,dt,integral_err_ms,err_x_m,err_v_mps,E_end_J,E_end_ref_J"

b3() {
  log "B3 self-consistency in dt (Δt = 1e-5 references)"
  local f=$OUT/b3_consistency.csv e=$OUT/b3_energy.csv solver dt
  echo "$B3_HEADER" >"$f"
  echo "solver,dt,t,E_J,E_minus_ref_J" >"$e"
  for solver in $B3_SOLVERS; do
    b23_run "$solver" 1e-5 "$TMP/ref_$solver.csv"
    # the reference's energy every millisecond
    awk -F, -v s="$solver" '{ k = $1 / 1e-3; if (k - int(k + 0.5) < 1e-6 && int(k + 0.5) - k < 1e-6)
      print s ",1e-5," $1 "," $10 ",0" }' "$TMP/ref_$solver.csv" >>"$e"
    for dt in $DTS; do
      b23_run "$solver" "$dt" "$TMP/s.csv"
      echo "$solver,$dt,$(errors "$TMP/ref_$solver.csv" "$TMP/s.csv" "$dt")" >>"$f"
      # energy every millisecond (every step for Δt ≥ 1 ms), and its difference to the reference's
      awk -F, -v s="$solver" -v dt="$dt" 'NR == FNR { eref[int($1 / 1e-5 + 0.5)] = $10; next }
        { k = $1 / 1e-3; if (dt >= 1e-3 || (k - int(k + 0.5) < 1e-6 && int(k + 0.5) - k < 1e-6))
          print s "," dt "," $1 "," $10 "," $10 - eref[int($1 / 1e-5 + 0.5)] }' \
        "$TMP/ref_$solver.csv" "$TMP/s.csv" >>"$e"
    done
  done
  slopes "$f" 3 | awk '{ print "B3 slope of log integral error vs log dt: " $0 }' >&2
  plot <<GP
set output 'b3_consistency.png'
set multiplot layout 1,3 title 'B3 self-consistency in dt, dragged cube over 0.5 s (reference: the same solver at dt = 1e-5)'
set logscale xy
set format xy '%.0e'
set xrange [1e-4:1e-2]
set xlabel 'dt (s)'
set key top left font ',8'
set title 'integral error sum |q - q_ref| dt (m s)'; set ylabel 'm s'
plot $(curves "'b3_consistency.csv' u 2:(pick(1, '@', column(3))) w lp lw 2 pt 7 t '@'" $B3_SOLVERS)
set title 'max |x - x_ref| (m)'; set ylabel 'm'
plot $(curves "'b3_consistency.csv' u 2:(pick(1, '@', column(4))) w lp lw 2 pt 7 t '@'" $B3_SOLVERS)
set title '|E - E_ref| at t = 0.5 s (J)'; set ylabel 'J'
plot $(curves "'b3_consistency.csv' u 2:(pick(1, '@', abs(column(6) - column(7)))) w lp lw 2 pt 7 t '@'" $B3_SOLVERS)
unset multiplot
GP
  plot <<GP
set output 'b3_energy.png'
set multiplot layout 2,3 title 'B3 energy of the dragged cube (kinetic + m g (z - z0)) minus the dt = 1e-5 s reference''s, J, vs t (s)'
set key bottom left font ',7'; set xtics 0.1; set yrange [-0.06:0.08]
$(for solver in $B3_SOLVERS; do
    echo "set title '$solver'"
    echo "plot $(curves "'b3_energy.csv' u 3:(pick(1, '$solver', pick(2, '@', column(5)))) w l lw 1.5 t 'dt = @'" $DTS)"
  done)
unset multiplot
GP
  b3eps
}

b4() {
  log "B4 CCP vs NCP consistency (reference ncp-pgs at Δt = 1e-5)"
  local f=$OUT/b4_ccp_vs_ncp.csv solver dt
  [ -f "$TMP/ref_ncp-pgs.csv" ] || b23_run ncp-pgs 1e-5 "$TMP/ref_ncp-pgs.csv"
  echo "$B3_HEADER" >"$f"
  for solver in ccp-admm ccp-pgs ncp-admm; do
    for dt in $DTS; do
      b23_run "$solver" "$dt" "$TMP/s.csv"
      echo "$solver,$dt,$(errors "$TMP/ref_ncp-pgs.csv" "$TMP/s.csv" "$dt")" >>"$f"
    done
  done
  slopes "$f" 3 | awk '{ print "B4 slope of log integral error vs log dt: " $0 }' >&2
  plot <<GP
set output 'b4_ccp_vs_ncp.png'
set multiplot layout 1,2 title 'B4: dragged cube over 0.5 s vs dt, reference ncp-pgs at dt = 1e-5; dashed: slope 1'
set logscale xy
set format xy '%.0e'
set xrange [1e-4:1e-2]
set xlabel 'dt (s)'
set key top left
set title 'integral error sum |q - q_ref| dt (m s)'; set ylabel 'm s'
plot $(curves "'b4_ccp_vs_ncp.csv' u 2:(pick(1, '@', column(3))) w lp lw 2 pt 7 t '@'" ccp-admm ccp-pgs ncp-admm), \
  [1e-4:1e-2] 0.05*x w l dt 2 lc rgb 'black' t 'slope 1'
set title 'max |x - x_ref| (m)'; set ylabel 'm'
plot $(curves "'b4_ccp_vs_ncp.csv' u 2:(pick(1, '@', column(4))) w lp lw 2 pt 7 t '@'" ccp-admm ccp-pgs ncp-admm), \
  [1e-4:1e-2] 0.15*x w l dt 2 lc rgb 'black' t 'slope 1'
unset multiplot
GP
}


# ---------------------------------------------------------------------------------------------
# B3eps self-consistency in the solver tolerance (paper §IV-B: the stopping criterion ε_abs is the
# second hyper-parameter of a simulator, varied apart from Δt): the dragged cube of B2 (0.5 s) and
# Solo-12 pushed with 10 N (b8_solo_push, 0.5 s), each solver run with its tolerance ε from 1e-2
# to 1e-10 N (every second decade) against the same solver at ε = 1e-12 N. The solvers stop on their own criterion
# (eps_model); the NCP ε_abs of the forces they return is recorded beside it. Per run: the
# integral consistency error Σ ‖q − q̄‖ Δt (q the whole configuration: free-flyer position and
# quaternion, and the joint angles of Solo), ‖q − q̄‖ at the end, iterations, the largest NCP
# ε_abs, the steps not converged and the mean solve time.
EPS_SWEEP="1e-2 1e-4 1e-6 1e-8 1e-10"
EPS_REF=1e-12

# qtraj FILE: t and the configuration (the columns before the first velocity) of a trajectory
qtraj() {
  awk -F, 'NR == 1 { for (i = 2; i <= NF; i++) if ($i ~ /_vx$/) { nq = i - 1; break } }
    { line = $1; for (i = 2; i <= nq; i++) line = line "," $i; print line }' "$1"
}

# q_error REF RUN: Σ ‖q − q̄‖ Δt over the rows of two runs at the same Δt, and ‖q − q̄‖ at the end
q_error() {
  awk -F, 'NR == FNR { r[FNR] = $0; next }
    FNR > 1 { n = split(r[FNR], a, ","); d2 = 0; for (i = 2; i <= n; i++) d2 += ($i - a[i]) ^ 2;
      s += sqrt(d2) * ($1 - tp); tp = $1; last = sqrt(d2) }
    END { printf "%.4g,%.4g", s, last }' "$1" "$2"
}

b3eps() {
  log "B3eps self-consistency in the solver tolerance eps_abs"
  local f=$OUT/b3_eps_sweep.csv scene name solver eps k stats
  echo "scene,solver,eps_abs_set_N,integral_err,final_err,mean_iterations,max_iterations,max_eps_abs_N,not_converged,mean_solve_us" >"$f"
  for scene in scenes/b2_dragged_cube_spheres.yaml scenes/b8_solo_push.yaml; do
    name=$([ "$scene" = scenes/b8_solo_push.yaml ] && echo solo || echo cube)
    for solver in $RIGID; do
      run "$scene" "$solver" "$TMP/eps.csv" --duration 0.5 --set "solver.eps_abs=$EPS_REF"
      qtraj "$TMP/eps.csv" >"$TMP/eps_ref.csv"
      for eps in $EPS_SWEEP; do
        run "$scene" "$solver" "$TMP/eps.csv" --duration 0.5 --set "solver.eps_abs=$eps"
        qtraj "$TMP/eps.csv" >"$TMP/eps_q.csv"
        stats=""
        for k in mean_iterations max_iterations max_eps_abs not_converged mean_solve_us; do
          stats="$stats,$(json_num "$TMP/summary.json" "$k" | awk '{ printf "%.4g", $1 }')"
        done
        echo "$name,$solver,$eps,$(q_error "$TMP/eps_ref.csv" "$TMP/eps_q.csv")$stats" >>"$f"
      done
    done
  done
  b3eps_plot
}

# the plot of results/b3_eps_sweep.csv
b3eps_plot() {
  plot <<GP
set output 'b3_eps_sweep.png'
set multiplot layout 2,3 title 'B3eps: each solver run with its own tolerance eps from 1e-2 to 1e-10 N against itself at 1e-12 N, 0.5 s'
set logscale xy; set format xy '%.0e'; set xrange [1e-10:1e-2]; set xlabel 'solver tolerance eps (N)'
set xtics (1e-10, 1e-8, 1e-6, 1e-4, 1e-2)
set key bottom right font ',7'
$(for name in cube solo; do
    echo "set title '$name: integral error sum |q - q_ref| dt'; set ylabel '(m or rad) s'"
    echo "plot $(curves "'b3_eps_sweep.csv' u (pick(1, '$name', pick(2, '@', column(3)))):(column(4) > 0 ? column(4) : 1e-16) w lp lw 1.5 pt 7 ps 0.6 t '@'" $RIGID)"
    echo "set title '$name: largest NCP eps_abs of the returned forces (N)'; set ylabel 'eps_abs (N)'"
    echo "plot $(curves "'b3_eps_sweep.csv' u (pick(1, '$name', pick(2, '@', column(3)))):8 w lp lw 1.5 pt 7 ps 0.6 t '@'" $RIGID), x w l dt 2 lc rgb 'black' t 'eps_abs = eps'"
    echo "set title '$name: mean iterations per step'; set ylabel 'iterations'; set format y '%g'"
    echo "plot $(curves "'b3_eps_sweep.csv' u (pick(1, '$name', pick(2, '@', column(3)))):6 w lp lw 1.5 pt 7 ps 0.6 t '@'" $RIGID)"
    echo "set format y '%.0e'"
  done)
unset multiplot
GP
}


# ---------------------------------------------------------------------------------------------
# B5 heavy on light: a 1e3 kg cube on a light cube of 1e3/r kg, r the mass ratio swept from 1 to
# 1e6 (scene variants of scenes/b5_heavy_on_light.yaml). The tolerance is scaled to the load:
# ε_abs = 1e-4 N is 1e-8 of the heavy cube's weight (9810 N); the scene's absolute 1e-6 N is
# 1e-10 of it, at the limit of double precision for a Delassus matrix of condition ~r.
# Then the published setup (r = 1e6, ε_abs = 1e-6, 10^4 iterations) over 0.1 s, every solver on
# the absolute criterion as in the paper (solver.eps_scale 0: ncp-hybrid's scaled criterion off),
# and ncp-hybrid once more on its default, the scaled criterion.
B5_SOLVERS="ncp-pgs ccp-pgs raisim ncp-admm ccp-admm ncp-stagproj ccp-newton ncp-hybrid"

b5() {
  log "B5 heavy on light, mass ratio sweep"
  local f=$OUT/b5_mass_ratio.csv r light solver
  echo "mass_ratio,solver,mean_iterations,max_iterations,max_eps_abs_N,not_converged,steps,max_penetration_m" >"$f"
  for solver in $B5_SOLVERS; do
    for r in 1 1e1 1e2 1e3 1e4 1e5 1e6; do
      light=$(awk -v r="$r" 'BEGIN { printf "%.6g", 1e3 / r }')
      sed "s/mass: 1.0e-3/mass: $light/" scenes/b5_heavy_on_light.yaml >"$TMP/b5.yaml"
      run "$TMP/b5.yaml" "$solver" "$TMP/b5.csv" --duration 0.05 --set solver.eps_abs=1e-4
      echo "$r,$solver,$(b5_stats "$TMP/summary.json")" >>"$f"
    done
  done
  f=$OUT/b5_published.csv
  echo "solver,mean_iterations,max_iterations,max_eps_abs_N,not_converged,steps,max_penetration_m" >"$f"
  for solver in $B5_SOLVERS; do
    run scenes/b5_heavy_on_light.yaml "$solver" "$TMP/b5.csv" --duration 0.1 \
      --set solver.eps_scale=0
    echo "$solver,$(b5_stats "$TMP/summary.json")" >>"$f"
  done
  run scenes/b5_heavy_on_light.yaml ncp-hybrid "$TMP/b5.csv" --duration 0.1
  echo "ncp-hybrid (scaled criterion),$(b5_stats "$TMP/summary.json")" >>"$f"
  plot <<GP
set output 'b5_mass_ratio.png'
set multiplot layout 1,2 title 'B5 heavy on light: 50 steps, eps_abs = 1e-4 N, at most 10^4 iterations'
set logscale xy
set format x '%.0e'
set format y '%.0e'
set xlabel 'mass ratio'
set key top left
set title 'max eps_abs (N)'; set ylabel 'max eps_abs (N)'
plot $(curves "'b5_mass_ratio.csv' u 1:(pick(2, '@', column(5))) w lp lw 2 pt 7 t '@'" $B5_SOLVERS)
set title 'mean iterations per step'; set ylabel 'iterations'; set format y '%g'
plot $(curves "'b5_mass_ratio.csv' u 1:(pick(2, '@', column(3))) w lp lw 2 pt 7 t '@'" $B5_SOLVERS)
unset multiplot
GP
  b5_more
}

# ---------------------------------------------------------------------------------------------
# B5, further: ccp-newton's compliance R = compliance_eps diag(G) swept down from its default
# 1e-6 at four mass ratios (ε_abs = 1e-4 N, 50 steps); the paper's Fig 13 left panel (ε_abs of
# every step over 0.1 s at r = 1e6, the published setup, every solver); and the paper's contact
# geometry, the cubes on corner spheres (scenes/b5_heavy_on_light_spheres.yaml), swept as b5.
B5_COMPLIANCE="1e-6 1e-8 1e-9 1e-10 1e-11 1e-12"

# b5_variant SCENE R: SCENE with the light cube's mass 1e3/R kg (and its inertia m a^2/6 where
# the scene gives one) into $TMP/b5.yaml
b5_variant() {
  local light inertia
  light=$(awk -v r="$2" 'BEGIN { printf "%.6g", 1e3 / r }')
  inertia=$(awk -v r="$2" 'BEGIN { printf "%.10g", 1e3 / r * 0.04 / 6 }')
  sed -e "s/mass: 1.0e-3/mass: $light/" \
    -e "s/inertia: \[6.666666666666667e-06, 6.666666666666667e-06, 6.666666666666667e-06\]/inertia: [$inertia, $inertia, $inertia]/" \
    "$1" >"$TMP/b5.yaml"
}

b5_more() {
  log "B5 ccp-newton's compliance"
  local f=$OUT/b5_compliance.csv ce r solver
  echo "compliance_eps,mass_ratio,mean_iterations,max_iterations,max_eps_abs_N,not_converged,steps,max_penetration_m,mean_solve_us" >"$f"
  for ce in $B5_COMPLIANCE; do
    for r in 1 1e2 1e4 1e6; do
      b5_variant scenes/b5_heavy_on_light.yaml "$r"
      run "$TMP/b5.yaml" ccp-newton "$TMP/b5.csv" --duration 0.05 --set solver.eps_abs=1e-4 \
        --set solver.compliance_eps="$ce"
      echo "$ce,$r,$(b5_stats "$TMP/summary.json"),$(json_num "$TMP/summary.json" mean_solve_us | awk '{ printf "%.4g", $1 }')" >>"$f"
    done
  done
  log "B5 eps_abs over time at r = 1e6 (Fig 13 left)"
  for solver in $B5_SOLVERS; do
    run scenes/b5_heavy_on_light.yaml "$solver" "$TMP/b5.csv" --duration 0.1 \
      --set solver.eps_scale=0
    cols "$TMP/b5.csv" t eps_abs iterations >"$OUT/b5_eps_time_$solver.csv"
  done
  log "B5 on corner spheres"
  f=$OUT/b5_spheres.csv
  echo "mass_ratio,solver,mean_iterations,max_iterations,max_eps_abs_N,not_converged,steps,max_penetration_m" >"$f"
  for solver in $B5_SOLVERS; do
    for r in 1 1e3 1e6; do
      b5_variant scenes/b5_heavy_on_light_spheres.yaml "$r"
      run "$TMP/b5.yaml" "$solver" "$TMP/b5.csv" --duration 0.05 --set solver.eps_abs=1e-4
      echo "$r,$solver,$(b5_stats "$TMP/summary.json")" >>"$f"
    done
  done
  plot <<GP
set output 'b5_eps_time.png'
set title 'B5 heavy on light, r = 1e6, eps_abs = 1e-6 N, at most 10^4 iterations: NCP eps_abs of each step'
set logscale y
set format y '%.0e'
set xlabel 't (s)'; set ylabel 'eps_abs (N)'
set key outside right
plot $(curves "'b5_eps_time_@.csv' u 1:2 every ::1 w l lw 2 t '@'" $B5_SOLVERS), 1e-6 w l dt 2 lc rgb 'black' t 'tolerance'
GP
  plot <<GP
set output 'b5_compliance.png'
set title 'B5: ccp-newton, R = compliance_eps diag(G): NCP eps_abs (N) vs mass ratio'
set logscale xy
set format x '%.0e'; set format y '%.0e'
set xlabel 'mass ratio'; set ylabel 'max eps_abs (N)'
set key outside right
plot $(curves "'b5_compliance.csv' u 2:(pick(1, '@', column(5))) w lp lw 2 pt 7 t 'eps = @'" $B5_COMPLIANCE)
GP
}

# b5_stats SUMMARY: mean_iterations,max_iterations,max_eps_abs,not_converged,steps,max_penetration
b5_stats() {
  local k out=""
  for k in mean_iterations max_iterations max_eps_abs not_converged steps max_penetration; do
    out="$out${out:+,}$(json_num "$1" "$k" | awk '{ printf "%.4g", $1 }')"
  done
  echo "$out"
}


# ---------------------------------------------------------------------------------------------
# B6 compliance: Solo-12 standing under PD, pushed with 10 N along x from t = 0.1 s (scene
# b8_solo_push), with the normal compliance R of the feet (material `compliance`) swept. Per
# foot: mean normal force and penetration over t ∈ [0.5, 1] s; the internal tangential force
# Σ‖f_T,i‖ − ‖Σ f_T,i‖ (zero when the tangential forces do not fight each other).
B6_R="0 1e-4 3e-4 1e-3 3e-3 1e-2 3e-2 1e-1"
B6_SOLVERS="ncp-pgs ncp-admm ccp-admm"

# solo_with_feet "MATERIAL KEYS": the Solo-12 push scene with its robot's friction replaced by a
# material 'foot' holding those keys; the URDF path, relative to the scene, made absolute since
# the copy is written elsewhere
solo_with_feet() {
  sed "s/^robots:/materials:\n  foot: {$1}\nrobots:/; s/^    friction: 0.9\$/    material: foot/;
    s|^\(    urdf: \)\.\./|\1$PWD/|" scenes/b8_solo_push.yaml
}

b6() {
  log "B6 compliance on Solo-12"
  local f=$OUT/b6_compliance.csv R solver
  echo "R,solver,fn_FL_N,fn_FR_N,fn_HL_N,fn_HR_N,penetration_m,internal_tangential_N,mean_iterations" >"$f"
  for solver in $B6_SOLVERS; do
    for R in $B6_R; do
      solo_with_feet "friction: 0.9, compliance: $R" >"$TMP/b6.yaml"
      "$MOREAU" run "$TMP/b6.yaml" --solver "$solver" --out "$TMP/b6.csv" --contacts "$TMP/b6c.csv" \
        --summary "$TMP/summary.json" --quiet
      awk -F, -v R="$R" -v s="$solver" -v it="$(json_num "$TMP/summary.json" mean_iterations)" '
        NR == 1 || $1 < 0.5 { next }
        { foot = $3; sub(/.*\//, "", foot); fn[foot] += $14; nfn[foot]++;
          if (-$11 > pen) pen = -$11;
          if ($1 != t) { close_step(); t = $1 }
          sx += $15; sy += $16; sn += sqrt($15 * $15 + $16 * $16) }
        function close_step() { if (t != "") { in_sum += sn - sqrt(sx * sx + sy * sy); nt++ }
          sx = sy = sn = 0 }
        END { close_step();
          printf "%s,%s,%.6f,%.6f,%.6f,%.6f,%.4g,%.4g,%.4g\n", R, s, fn["FL_foot"] / nfn["FL_foot"],
            fn["FR_foot"] / nfn["FR_foot"], fn["HL_foot"] / nfn["HL_foot"],
            fn["HR_foot"] / nfn["HR_foot"], pen, in_sum / nt, it }' "$TMP/b6c.csv" >>"$f"
      if [ "$solver" = ncp-admm ]; then
        awk -F, 'NR > 1 { foot = $3; sub(/.*\//, "", foot); if ($1 != t) { if (t != "") print line; t = $1; line = t }
            line = line "," $14 } END { print line }' "$TMP/b6c.csv" >"$OUT/b6_normal_forces_R$R.csv"
      fi
    done
  done
  # the physically parametrised contact (docs/physics.md, "Stiffness and dissipation"): the feet's
  # stiffness k and dissipation tau; over t >= 0.5 s the mean depth of each foot against its
  # mean force / k (the static law lambda_N = -k phi, the feet nearly at rest)
  local fk=$OUT/b6_stiffness.csv k
  echo "k_N_per_m,tau_s,solver,mean_fn_N,mean_depth_m,mean_fn_over_k_m,depth_rel_error,max_depth_m,mean_iterations" >"$fk"
  for solver in $B6_SOLVERS; do
    for k in 1e4 1e5 1e6; do
      solo_with_feet "friction: 0.9, stiffness: $k, dissipation: 0.01" >"$TMP/b6.yaml"
      "$MOREAU" run "$TMP/b6.yaml" --solver "$solver" --out "$TMP/b6.csv" --contacts "$TMP/b6c.csv" \
        --summary "$TMP/summary.json" --quiet
      awk -F, -v k="$k" -v s="$solver" -v it="$(json_num "$TMP/summary.json" mean_iterations)" '
        NR == 1 || $1 < 0.5 { next }
        { n++; fn += $14; d += -$11; if (-$11 > dmax) dmax = -$11 }
        END { printf "%s,0.01,%s,%.6f,%.6g,%.6g,%.3g,%.6g,%.4g\n", k, s, fn / n, d / n, fn / n / k,
                (d / n) / (fn / n / k) - 1, dmax, it }' "$TMP/b6c.csv" >>"$fk"
    done
  done
  # change of each foot's normal force from the rigid contact (R = 0, the first row per solver)
  awk -F, 'NR == 1 { print $0 ",dfn_FL_N,dfn_FR_N,dfn_HL_N,dfn_HR_N"; next }
    $1 == 0 { for (c = 3; c <= 6; c++) base[$2, c] = $c }
    { line = $0; for (c = 3; c <= 6; c++) line = line sprintf(",%.4g", $c - base[$2, c]); print line }' \
    "$f" >"$TMP/b6.csv" && mv "$TMP/b6.csv" "$f"
  plot <<GP
set output 'b6_compliance.png'
set multiplot layout 1,2 title 'B6 Solo-12 pushed with 10 N, normal compliance R of the feet (mean over t in [0.5, 1] s)'
set logscale x; set xlabel 'R (scene compliance)'; set key top left
set title '|change of the mean normal force| from R = 0, per foot (N), ncp-admm'
set ylabel '|delta lambda_N| (N)'
set logscale y; set format y '%.0e'
plot for [c=10:13] 'b6_compliance.csv' u (pick(2, 'ncp-admm', column(1) > 0 ? column(1) : NaN)):(abs(column(c))) w lp lw 2 pt 7 t columnhead(c)
set title 'max penetration (m)'; set logscale y; set ylabel 'penetration (m)'
plot $(curves "'b6_compliance.csv' u (pick(2, '@', column(1) > 0 ? column(1) : NaN)):7 w lp lw 2 pt 7 t '@'" $B6_SOLVERS)
unset multiplot
GP
  b6_tangential
}

# B6, tangential part: Solo-12 standing under PD, pushed at the base by a periodic force
# F(t) = 10 sin(2π f (t − 0.1)) N along x, f = 1 Hz, from t = 0.1 s for two periods
# (scenes/b6_solo_sway.yaml), with the tangential compliance R_T of the feet (material `foot`,
# normal compliance 0) swept. A sticking foot creeps at c_T = −Δt R_T λ_T (docs/solvers.md,
# "Compliance"); with the four feet carrying the push equally each moves at Δt R_T F(t) / 4, so
# that its x swings through Δt R_T A / (4 π f) from crest to crest (A = 10 N) and comes back. Per
# R_T and solver, over t ≥ 0.1 s: the base's x excursion (max − min) and its end drift, the
# feet's x excursion (mean over the feet of the contact points' max − min) against that closed
# form, the standard deviation of the base v_x, the internal tangential force
# Σ‖f_T,i‖ − ‖Σ f_T,i‖, the fraction of foot-steps at the friction limit (‖f_T‖ ≥ 0.999 μ f_N:
# sliding) and the mean iterations. Time series per R_T for ncp-admm: t, base x and v_x, the FL
# foot's x force and contact-point x.
B6_RT="0 0.1 0.3 1 3 10 30 100"
B6_PUSH=10
B6_FREQ=1
B6_MU=0.9

# b6_sway RT: the sway scene with the feet's tangential compliance RT, the URDF path made
# absolute since the copy is written elsewhere
b6_sway() {
  sed "s/^  foot: {friction: $B6_MU, tangential_compliance: 0}\$/  foot: {friction: $B6_MU, tangential_compliance: $1}/;
    s|^\(    urdf: \)\.\./|\1$PWD/|" scenes/b6_solo_sway.yaml
}

b6_tangential() {
  log "B6 tangential compliance on Solo-12 under a periodic push"
  local f=$OUT/b6_tangential.csv R solver bstat
  echo "RT,solver,base_excursion_m,base_drift_m,feet_excursion_m,feet_excursion_closed_form_m,vx_std_mps,internal_tangential_N,slip_fraction,mean_iterations" >"$f"
  for solver in $B6_SOLVERS; do
    for R in $B6_RT; do
      b6_sway "$R" >"$TMP/b6t.yaml"
      grep -q "tangential_compliance: $R}" "$TMP/b6t.yaml" || { echo "run.sh: B6 scene not rewritten" >&2; return 1; }
      "$MOREAU" run "$TMP/b6t.yaml" --solver "$solver" --out "$TMP/b6t.csv" --contacts "$TMP/b6tc.csv" \
        --summary "$TMP/summary.json" --quiet
      cols "$TMP/b6t.csv" t solo/root_joint_x solo/root_joint_vx >"$TMP/b6v.csv"
      # base: x excursion and drift from the push's start, std of v_x
      bstat=$(awk -F, 'NR == 1 || $1 < 0.1 - 1e-9 { next }
        { if (x0 == "") { x0 = $2; mn = $2; mx = $2 } if ($2 < mn) mn = $2; if ($2 > mx) mx = $2;
          x = $2; s += $3; s2 += $3 * $3; m++ }
        END { mean = s / m; sd = sqrt(s2 / m - mean * mean); if (sd != sd) sd = 0;
          printf "%.5g,%.4g,%.5g", mx - mn, x - x0, sd }' "$TMP/b6v.csv")
      awk -F, -v R="$R" -v s="$solver" -v bs="$bstat" -v A="$B6_PUSH" -v fq="$B6_FREQ" -v mu="$B6_MU" \
        -v it="$(json_num "$TMP/summary.json" mean_iterations)" '
        NR == 1 || $1 < 0.1 - 1e-9 { next }
        { foot = $3; sub(/.*\//, "", foot); nc++;
          if (!(foot in mn) || $5 < mn[foot]) mn[foot] = $5; if (!(foot in mx) || $5 > mx[foot]) mx[foot] = $5
          if (sqrt($15 * $15 + $16 * $16) >= 0.999 * mu * $17) slip++
          if ($1 != t) { close_step(); t = $1 }
          sx += $15; sy += $16; sn += sqrt($15 * $15 + $16 * $16) }
        function close_step() { if (t != "") { in_sum += sn - sqrt(sx * sx + sy * sy); nt++ }
          sx = sy = sn = 0 }
        END { close_step(); split(bs, b, ",");
          for (k in mn) { fe += mx[k] - mn[k]; nf++ }
          printf "%s,%s,%s,%s,%.5g,%.5g,%s,%.4g,%.4g,%.4g\n", R, s, b[1], b[2], fe / nf,
            1e-3 * R * A / (4 * 3.14159265358979 * fq), b[3], in_sum / nt, slip / nc, it }' \
        "$TMP/b6tc.csv" >>"$f"
      if [ "$solver" = ncp-admm ]; then
        # t, base x and v_x, the FL foot x force and contact-point x
        awk -F, 'NR == FNR { if (FNR > 1) { bx[$1] = $2; bv[$1] = $3 } next }
          FNR == 1 { print "t,x,vx,fx_FL,px_FL"; next }
          $3 ~ /FL_foot$/ { print $1 "," bx[$1] "," bv[$1] "," $15 "," $5 }' \
          "$TMP/b6v.csv" "$TMP/b6tc.csv" >"$OUT/b6_tangential_RT$R.csv"
      fi
    done
  done
  local series="" R
  for R in $B6_RT; do series="$series $R"; done
  plot <<GP
set output 'b6_tangential.png'
set multiplot layout 2,2 title 'B6 Solo-12 pushed with 10 sin(2 pi t) N from t = 0.1 s, tangential compliance R_T of the feet (ncp-admm unless said)'
set key top left font ',8'; set xlabel 't (s)'
set title 'base x (m)'; set ylabel 'x (m)'
plot $(curves "'b6_tangential_RT@.csv' u 1:2 w l lw 1.5 t 'R_T = @'" $series)
set title 'x force of the FL foot f_x (N)'; set ylabel 'f_x (N)'
plot $(curves "'b6_tangential_RT@.csv' u 1:4 w l lw 1.5 t 'R_T = @'" $series)
set logscale xy; set xlabel 'R_T (kg^-1)'; set key top left
set title 'x excursion, crest to crest (m)'; set ylabel 'm'
plot $(curves "'b6_tangential.csv' u (pick(2, '@', column(1) > 0 ? column(1) : NaN)):3 w lp lw 2 pt 7 t '@ (base)'" $B6_SOLVERS), \\
  'b6_tangential.csv' u (pick(2, 'ncp-admm', column(1) > 0 ? column(1) : NaN)):5 w p pt 6 ps 2 lc rgb '#d62728' t 'ncp-admm (feet)', \\
  'b6_tangential.csv' u (pick(2, 'ncp-admm', column(1) > 0 ? column(1) : NaN)):6 w l lw 2 dt 2 lc rgb '#000000' t 'dt R_T A / (4 pi f)'
set title 'internal tangential force (N), mean over the push'; set ylabel 'N'
plot $(curves "'b6_tangential.csv' u (pick(2, '@', column(1) > 0 ? column(1) : NaN)):(column(8) > 1e-9 ? column(8) : 1e-9) w lp lw 2 pt 7 t '@'" $B6_SOLVERS)
unset multiplot
GP
}


# ---------------------------------------------------------------------------------------------
# B7 solver convergence: one contact problem from a Solo-12 trajectory (b8_solo_push, 0.3 s) and
# one from a TALOS trajectory (b8_talos_push, 0.15 s), the step after the push starts with the
# most ncp-pgs iterations, and the hardest step of the TALOS trajectory from its start
# ("talos-landing": the feet settling onto the ground in the first 15 ms, where ncp-pgs stops at
# its iteration limit); and two ill-conditioned ones, B5's heavy cube resting on a light one
# (scenes/b5_heavy_on_light.yaml, 8 contacts, the light cube's mass set for a mass ratio of 1e2
# ("stack-1e2") and 1e4 ("stack-1e4"), step 30: the stack at rest). Each is dumped with
# --dump-problems and solved cold by `moreau solve` with --max-iter N for growing N and
# eps_abs 1e-300 and --eps-scale 0 (no solve stops on its criterion, ncp-hybrid's scaled one
# included), once with --criterion ncp (the NCP criterion
# chooses the best iterate returned: its eps_abs is the curve of the left column) and once with
# --criterion own (the solver's own criterion chooses it: eps_model, the right column); a solver
# may stop earlier on a stall (the iterations done are recorded). Two recorded problems more: a
# pile of three cubes in the 100-cube bin (15 face contacts, hyperstatic: "pile",
# tests/fixtures/hybrid/bin100_pile.json) and the Allegro hand holding its ball (3 contacts, one
# between the ball and a finger link: "grasp", tests/fixtures/allegro_hold_step100.json). And
# TALOS standing with both hands resting on tables ("talos-hands": scenes/talos_stand.yaml with
# two fixed boxes whose tops are 0.5 mm above the grippers' lowest corners, joint friction off
# as in B8's TALOS, stepped 0.1 s with ncp-pgs; its hardest step from 5 ms on: feet and hands in
# contact, a closed loop).
B7_ITERS="1 2 3 5 10 20 50 100 200 500 1000 2000 5000 10000"
B7_PROBLEMS=${B7_PROBLEMS:-solo talos talos-landing talos-hands stack-1e2 stack-1e4 pile grasp}

# b7_dump PROBLEM: dump the trajectory of B7's PROBLEM and copy its chosen step to OUT
b7_dump() {
  local robot=$1 scene dur from step light
  mkdir -p "$TMP/dump_$robot"
  case $robot in
    pile) # cold, as the others: its recorded warm start (one key per line) left out
      grep -v '^ "lambda0":' tests/fixtures/hybrid/bin100_pile.json >"$OUT/b7_problem_$robot.json"
      return ;;
    grasp) cp tests/fixtures/allegro_hold_step100.json "$OUT/b7_problem_$robot.json"; return ;;
    talos-hands)
      awk -v root="$PWD" '{ sub(/\.\.\/robots/, root "/robots"); print }
        /^bodies:/ { for (k = 0; k < 2; ++k)
          printf "  - name: table_%d\n    fixed: true\n    position: [0.115, %.3f, 0.581]\n    geoms:\n      - {type: box, size: [0.3, 0.3, 0.1], friction: 0.9}\n", k, k ? -0.461 : 0.461 }
        END { print "    joint_friction_scale: 0" }' \
        scenes/talos_stand.yaml >"$TMP/b7.yaml"
      "$MOREAU" run "$TMP/b7.yaml" --solver ncp-pgs --duration 0.1 --dump-problems "$TMP/dump_$robot" \
        --out "$TMP/b7.csv" --contacts /dev/null --quiet
      step=$(cols "$TMP/b7.csv" t iterations | awk -F, 'NR > 1 && $1 >= 0.005 && $2 > m { m = $2; k = $1 }
        END { printf "%06d", k / 0.001 + 0.5 }') ;;
    stack-*)
      light=$(awk -v r="${robot#stack-}" 'BEGIN { printf "%.6g", 1e3 / r }')
      sed "s/mass: 1.0e-3/mass: $light/" scenes/b5_heavy_on_light.yaml >"$TMP/b7.yaml"
      "$MOREAU" run "$TMP/b7.yaml" --duration 0.03 --dump-problems "$TMP/dump_$robot" \
        --out "$TMP/b7.csv" --contacts /dev/null --quiet
      step=000030 ;;
    *)
      case $robot in solo) scene=solo; dur=0.3; from=0.1 ;; talos) scene=talos; dur=0.15; from=0.1 ;;
        talos-landing) scene=talos; dur=0.15; from=0 ;; esac
      "$MOREAU" run "scenes/b8_${scene}_push.yaml" --duration "$dur" --dump-problems "$TMP/dump_$robot" \
        --out "$TMP/b7.csv" --contacts /dev/null --quiet
      # the hardest step from time `from` on (most ncp-pgs iterations, warm started)
      step=$(cols "$TMP/b7.csv" t iterations | awk -F, -v from="$from" 'NR > 1 && $1 >= from && $2 > m { m = $2; k = $1 }
        END { printf "%06d", k / 0.001 + 0.5 }') ;;
  esac
  log "  $robot: step $step"
  cp "$TMP/dump_$robot/step_$step.json" "$OUT/b7_problem_$robot.json"
}

b7() {
  log "B7 solver convergence on Solo-12, TALOS and heavy-on-light problems"
  local f=$OUT/b7_convergence.csv robot solver n crit
  echo "robot,solver,max_iter,iterations,eps_abs_N,eps_model_N,criterion" >"$f"
  for robot in $B7_PROBLEMS; do
    b7_dump "$robot"
    for solver in $RIGID; do
      for crit in ncp own; do
        for n in $B7_ITERS; do
          "$MOREAU" solve "$OUT/b7_problem_$robot.json" --solver "$solver" --max-iter "$n" \
            --eps-abs 1e-300 --eps-scale 0 --criterion "$crit" --json | tr ',{}' '\n\n\n' |
            awk -F: -v pre="$robot,$solver,$n" -v crit="$crit" '/"iterations"/ { it = $2 } /"eps_abs"/ { e = $2 }
              /"eps_model"/ { em = $2 }
              END { gsub(/ /, "", it); gsub(/ /, "", e); printf "%s,%s,%.4g,%.4g,%s\n", pre, it, e, em, crit }' >>"$f"
        done
      done
    done
  done
  b7plot
}

# the plot of results/b7_convergence.csv
b7plot() {
  plot <<GP
set terminal pngcairo size 1000,2450 font 'sans,10' noenhanced
set output 'b7_convergence.png'
set multiplot layout 8,2 title 'B7 vs iterations, cold start: left the NCP criterion eps_abs (best iterate on it), right each solver''s own criterion (best iterate on it)'
set logscale xy
set format y '%.0e'
set xlabel 'iterations'
set key bottom left font ',7'
$(for robot in $B7_PROBLEMS; do
    nc="' . system('grep -o \"\\\"nc\\\": [0-9]*\" b7_problem_$robot.json | cut -d\" \" -f2') . ' contacts"
    echo "set title '$robot ($nc): NCP eps_abs (N)'; set ylabel 'eps_abs (N)'"
    tpl="'b7_convergence.csv' u (pick(1, '$robot', pick(2, '@', pick(7, 'ncp', column(4))))):5"
    echo "plot $(curves "$tpl w lp lw 2 pt 7 ps 0.5 t '@'" $RIGID)"
    echo "set title '$robot ($nc): own criterion eps_model (N)'; set ylabel 'eps_model (N)'"
    tpl="'b7_convergence.csv' u (pick(1, '$robot', pick(2, '@', pick(7, 'own', column(4))))):(column(6) > 0 ? column(6) : 1e-16)"
    echo "plot $(curves "$tpl w lp lw 2 pt 7 ps 0.5 t '@'" $RIGID)"
  done)
unset multiplot
GP
}


# ---------------------------------------------------------------------------------------------
# B8 timings: mean solve time per step (µs) and mean iterations per solver, warm and cold start
# (solver.warm_start=0), from `moreau compare`, the median of B8_REPS runs (the machine is
# shared: one run's times move with the load): Solo-12 pushed 10 N (0.5 s), TALOS pushed 80 N
# (0.2 s), a ball dropped into the Allegro hand (scenes/b8_allegro_ball.yaml, 1 s: the fall, the
# landing, the roll into the corner of the palm). The means are over every step of the
# trajectory, the contact-free ones included (the paper averages along the trajectory).

# b8_scene ROBOT: the B8 scene of a robot
b8_scene() { if [ "$1" = allegro ]; then echo scenes/b8_allegro_ball.yaml; else echo "scenes/b8_$1_push.yaml"; fi; }

B8_REPS=${B8_REPS:-3}

b8() {
  log "B8 timings, warm and cold start, $B8_REPS runs each"
  local f=$OUT/b8_timings.csv robot dur ws rep
  : >"$TMP/b8_runs.csv"
  for rep in $(seq "$B8_REPS"); do
    for robot in solo talos allegro; do
      case $robot in solo) dur=0.5 ;; talos) dur=0.2 ;; allegro) dur=1.0 ;; esac
      for ws in 1 0; do
        "$MOREAU" compare "$(b8_scene $robot)" --duration "$dur" --set "solver.warm_start=$ws" \
          --solvers "$(echo "$RIGID lcp-stagproj lcp-lemke" | tr ' ' ',')" |
          awk -v r="$robot" -v st="$([ $ws = 1 ] && echo warm || echo cold)" \
            'NR > 1 && $10 == "ok" { print r "," $1 "," st "," $3 "," $4 "," $5 "," $6 "," $9 }' >>"$TMP/b8_runs.csv"
      done
    done
  done
  # per robot, solver and start: the median of the runs' mean solve times, their spread
  # (max/min), and the run's deterministic counts (iterations, ε_abs, steps not converged)
  echo "robot,solver,start,solve_us,\
mean_iterations,max_iterations,max_eps_abs_N,not_converged,solve_us_max_over_min" >"$f"
  awk -F, '{ key = $1 "," $2 "," $3; if (!(key in n)) order[++nk] = key; t[key, ++n[key]] = $4;
      rest[key] = $5 "," $6 "," $7 "," $8 }
    END { for (k = 1; k <= nk; k++) { key = order[k]; m = n[key];
        for (i = 1; i <= m; i++) v[i] = t[key, i];
        for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
        med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2;
        printf "%s,%.1f,%s,%.2f\n", key, med, rest[key], (v[1] > 0 ? v[m] / v[1] : 0) } }' \
    "$TMP/b8_runs.csv" >>"$f"
  plot <<GP
set output 'b8_timings.png'
set multiplot layout 1,3 title 'B8 mean solve time per step (us), warm (dark) and cold (light) start'
set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8 border -1
set logscale y
set yrange [0.1:*]
set xtics rotate by -45 font ',8'
set ylabel 'us per step'
set key top left
$(for robot in solo talos allegro; do
    grep "^$robot,.*,warm," "$OUT/b8_timings.csv" | cut -d, -f2,4 >"$OUT/.b8_${robot}_warm"
    grep "^$robot,.*,cold," "$OUT/b8_timings.csv" | cut -d, -f2,4 >"$OUT/.b8_${robot}_cold"
    echo "set title '$robot'"
    echo "plot '.b8_${robot}_warm' u 2:xtic(1) lc rgb '#1f77b4' t 'warm', '.b8_${robot}_cold' u 2 lc rgb '#aec7e8' t 'cold'"
  done)
unset multiplot
GP
  rm -f "$OUT"/.b8_*
}


# ---------------------------------------------------------------------------------------------
# B9, B10 and B11 locomotion: Solo-12 walking forward at 0.3 m/s under the model-predictive
# controller (docs/mpc.md), the same controller and command for every solver: on flat ground
# (μ = 0.9, scenes/b9_solo_trot.yaml), on the bumpy ground (μ = 0.3, 0.1 m from trough to crest,
# scenes/b10_solo_trot_bumpy.yaml), and B11 (the RaiSim note's Fig. 5) on that bumpy ground
# with a fixed iteration budget for raisim, raisim-ds and ncp-pgs.

# walk_series IN OUT: per step t, x, y, z, yaw, forward and sideways base velocity (heading
# frame), yaw rate (world), their running means over one gait period (0.3 s), eps_abs,
# iterations, solve time (µs)
walk_series() {
  cols "$1" t solo/root_joint_x solo/root_joint_y solo/root_joint_z solo/root_joint_qx \
    solo/root_joint_qy solo/root_joint_qz solo/root_joint_qw solo/root_joint_vx solo/root_joint_vy \
    solo/root_joint_vz solo/root_joint_wx solo/root_joint_wy solo/root_joint_wz eps_abs iterations \
    solve_us | awk -F, '
    NR == 1 { print "t,x,y,z,yaw,v_fwd,v_side,yaw_rate,v_fwd_avg,v_side_avg,yaw_rate_avg,eps_abs,iterations,solve_us"; next }
    { qx = $5; qy = $6; qz = $7; qw = $8
      r00 = 1 - 2 * (qy * qy + qz * qz); r01 = 2 * (qx * qy - qz * qw); r02 = 2 * (qx * qz + qy * qw)
      r10 = 2 * (qx * qy + qz * qw); r11 = 1 - 2 * (qx * qx + qz * qz); r12 = 2 * (qy * qz - qx * qw)
      r20 = 2 * (qx * qz - qy * qw); r21 = 2 * (qy * qz + qx * qw); r22 = 1 - 2 * (qx * qx + qy * qy)
      vx = r00 * $9 + r01 * $10 + r02 * $11; vy = r10 * $9 + r11 * $10 + r12 * $11
      wz = r20 * $12 + r21 * $13 + r22 * $14
      yaw = atan2(r10, r00); c = cos(yaw); s = sin(yaw)
      f = c * vx + s * vy; sd = -s * vx + c * vy
      k = n % 300; sf += f - bf[k]; ss += sd - bs[k]; sw += wz - bw[k]; bf[k] = f; bs[k] = sd; bw[k] = wz; n++
      m = n < 300 ? n : 300
      printf "%s,%s,%s,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%s,%s\n", $1, $2, $3, $4, yaw, f, sd, wz,
        sf / m, ss / m, sw / m, $15, $16, $17 }'
}

# walk_row SOLVER SERIES SUMMARY_JSON: the summary row of one run (means after the first second)
walk_row() {
  local s="" k
  for k in mean_iterations max_eps_abs not_converged mean_solve_us falls; do
    s="$s,$(json_num "$3" "$k" | awk '{ printf "%.4g", $1 }')"
  done
  awk -F, -v solver="$1" -v rest="$s" '
    NR == 1 { next }
    $1 > 1.0 + 1e-9 { n++; f += $6; sd += $7; w += $8; e += $12; if ($12 > 0) { le += log($12); ne++ } }
    { x = $2; y = $3; z = $4; yaw = $5 }
    END { printf "%s,%.4f,%.4f,%.4f,%.3g,%.4f,%.4f,%.4f,%.4f%s\n", solver, f / n, sd / n, w / n,
            ne ? exp(le / ne) : 0, x, y, z, yaw, rest }' "$2"
}

# walk_spread SUMMARY: distance of each solver's end point from ncp-pgs's, and the largest
# distance between two NCP solvers (their spread among themselves)
walk_spread() {
  awk -F, 'NR == 1 { next }
    { s[NR] = $1; x[NR] = $6; y[NR] = $7; if ($1 == "ncp-pgs") { rx = $6; ry = $7 } }
    END { print "solver,distance_to_ncp_pgs_m";
          for (i = 2; i <= NR; i++) printf "%s,%.4f\n", s[i], sqrt((x[i] - rx) ^ 2 + (y[i] - ry) ^ 2)
          for (i = 2; i <= NR; i++) for (j = i + 1; j <= NR; j++)
            if (s[i] ~ /^ncp-/ && s[j] ~ /^ncp-/) { d = sqrt((x[i] - x[j]) ^ 2 + (y[i] - y[j]) ^ 2); if (d > m) m = d }
          printf "ncp_spread,%.4f\n", m }' "$1"
}

walk_header="solver,mean_v_fwd,mean_v_side,mean_yaw_rate,geomean_eps_abs_N,x_end_m,y_end_m,z_end_m,yaw_end_rad,mean_iterations,max_eps_abs_N,not_converged,mean_solve_us,falls"

# walk_plot TAG TITLE SOLVERS: tracked vs target velocity, eps_abs, time per step, trajectory
walk_plot() {
  local tag=$1 title=$2
  shift 2
  plot <<GP
set output '$tag.png'
set multiplot layout 2,2 title '$title'
set xlabel 't (s)'; set key top right font ',8'
set title 'forward velocity over one gait period (m/s); target 0.3'
plot $(curves "'${tag}_@.csv' u 1:9 w l lw 1.2 t '@'" "$@"), 0.3 w l dt 2 lc rgb '#000000' t 'target'
set title 'eps_abs per step (N)'; set logscale y; set format y '%.0e'
plot $(curves "'${tag}_@.csv' u 1:(column(12) > 1e-12 ? column(12) : NaN) w l lw 0.8 t '@'" "$@")
set title 'solver time per step (us)'; set format y '%g'
plot $(curves "'${tag}_@.csv' u 1:(column(14) > 0 ? column(14) : NaN) w l lw 0.8 t '@'" "$@")
unset logscale y
set title 'base trajectory (m)'; set xlabel 'x (m)'; set ylabel 'y (m)'
plot $(curves "'${tag}_@.csv' u 2:3 w l lw 1.2 t '@'" "$@")
unset multiplot
GP
}

# walk TAG SCENE TITLE SOLVERS [run options]
walk() {
  local tag=$1 scene=$2 title=$3 solvers=$4 solver
  shift 4
  echo "$walk_header" >"$OUT/${tag}_summary.csv"
  for solver in $solvers; do
    run "$scene" "$solver" "$TMP/$tag.csv" "$@"
    walk_series "$TMP/$tag.csv" >"$OUT/${tag}_$solver.csv"
    walk_row "$solver" "$OUT/${tag}_$solver.csv" "$TMP/summary.json" >>"$OUT/${tag}_summary.csv"
  done
  walk_spread "$OUT/${tag}_summary.csv" >"$OUT/${tag}_spread.csv"
  # shellcheck disable=SC2086
  walk_plot "$tag" "$title" $solvers
}

# walk_criteria TAG SCENE SOLVERS [run options]: each solver run three times, stopping on its own
# model's criterion, on the NCP criterion (--set solver.criterion=own|ncp), and on the NCP
# criterion without the stall test ("ncp-nostall": solver.eps_rel=0, the paper's rule: the
# criterion or the iteration cap), into TAG_criterion.csv: per run the mean and largest iterations a step (the largest island's), the
# fractions of the steps that stopped at the budget, that did not converge on the criterion in
# use and whose NCP eps_abs ended above eps_abs, the fraction of the steps whose largest island
# ran the iteration cap (solver.max_iter, counted on the trajectory's iterations column: the
# summary's budget count misses solves with solver.retry false), the mean forward velocity after
# 1 s, the end x, the geometric mean and largest NCP eps_abs, the mean solve time a step, falls
walk_criteria() {
  local tag=$1 scene=$2 solvers=$3 solver crit k s cap=10000 a
  shift 3
  for a in "$@"; do case $a in solver.max_iter=*) cap=${a#*=} ;; esac; done
  echo "solver,criterion,mean_iterations,max_iterations,budget_frac,not_converged_frac,ncp_not_converged_frac,at_cap_frac,mean_v_fwd,x_end_m,geomean_eps_abs_N,max_eps_abs_N,mean_solve_us,falls" \
    >"$OUT/${tag}_criterion.csv"
  for solver in $solvers; do
    for crit in ${B10_CRITS:-own ncp ncp-nostall}; do
      run "$scene" "$solver" "$TMP/$tag.csv" "$@" --set "solver.criterion=${crit%-nostall}" \
        $([ "$crit" = ncp-nostall ] && echo --set solver.eps_rel=0)
      walk_series "$TMP/$tag.csv" >"$TMP/${tag}_series.csv"
      s=""
      for k in steps mean_iterations max_iterations budget not_converged ncp_not_converged max_eps_abs mean_solve_us falls; do
        s="$s $(json_num "$TMP/summary.json" "$k")"
      done
      awk -F, -v solver="$solver" -v crit="$crit" -v sum="$s" -v cap="$cap" '
        NR == 1 { next }
        $1 > 1.0 + 1e-9 { n++; f += $6 }
        { x = $2; if ($12 > 0) { le += log($12); ne++ } if ($13 >= cap) at++ }
        END { split(sum, v, " "); printf "%s,%s,%.4g,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3g,%.4g,%.4g,%d\n",
                solver, crit, v[2], v[3], v[4] / v[1], v[5] / v[1], v[6] / v[1], at / v[1], f / n, x,
                ne ? exp(le / ne) : 0, v[7], v[8], v[9] }' "$TMP/${tag}_series.csv" >>"$OUT/${tag}_criterion.csv"
    done
  done
}

b9() {
  log "B9 Solo-12 walking under MPC on flat ground"
  walk b9 scenes/b9_solo_trot.yaml 'B9 Solo-12 walking at 0.3 m/s under MPC, flat ground, mu = 0.9' "$RIGID"
}

b10() {
  log "B10 Solo-12 walking under MPC on the bumpy ground"
  walk b10 scenes/b10_solo_trot_bumpy.yaml \
    'B10 Solo-12 walking at 0.3 m/s under MPC, bumpy ground, mu = 0.3' "$RIGID"
  b10crit
  b10steep
}

# B10 with every solver stopping on its own criterion and on the NCP criterion
b10crit() {
  log "B10 bumpy ground, each solver on its own criterion and on the NCP criterion"
  walk_criteria b10 scenes/b10_solo_trot_bumpy.yaml "${B10_CRIT_SOLVERS:-$RIGID}"
}

# B10, steep variant (scenes/b10_solo_trot_steep.yaml: the sine ground at a 1.2 m wavelength,
# slopes to 14.7°): B10_SEEDS runs per solver, each from an initial base pose perturbed by its
# seed (b10_seeded), so that a model's effect on the walk is read against the run-to-run spread.
B10_SEEDS=8

# b10_seeded SEED: the steep scene with the base's initial pose perturbed: x and y shifted by up
# to ±1 cm and the yaw turned by up to ±1°, uniform draws of the Park–Miller generator
# (x ← 16807 x mod 2³¹ − 1, exact in doubles, the same under every awk) seeded with SEED + 1;
# seed 0 is the scene as shipped. The URDF path, relative to the scene, made absolute.
b10_seeded() {
  awk -v seed="$1" -v dir="$PWD" '
    function draw() { r = (16807 * r) % 2147483647; return r / 2147483647 }
    BEGIN { r = seed + 1; for (i = 0; i < 3; i++) draw()
      dx = seed ? 0.02 * draw() - 0.01 : 0; dy = seed ? 0.02 * draw() - 0.01 : 0
      yaw = seed ? (2 * draw() - 1) * 3.14159265358979 / 180 : 0 }
    /^    position: \[0, 0, 0\.29\]$/ {
      printf "    position: [%.6f, %.6f, 0.29]\n    orientation: [0, 0, %.12f, %.12f]\n", dx, dy,
        sin(yaw / 2), cos(yaw / 2); found = 1; next }
    { sub(/^    urdf: \.\.\//, "    urdf: " dir "/"); print }
    END { if (!found) { print "b10_seeded: no initial position in the scene" > "/dev/stderr"; exit 1 } }' \
    scenes/b10_solo_trot_steep.yaml
}

b10steep() {
  log "B10 on the steep sine ground (1.2 m wavelength), $B10_SEEDS runs per solver"
  local runs=$OUT/b10_steep_runs.csv solver seed
  echo "seed,$walk_header" >"$runs"
  for solver in $RIGID; do
    for seed in $(seq 0 $((B10_SEEDS - 1))); do
      b10_seeded "$seed" >"$TMP/b10s.yaml"
      run "$TMP/b10s.yaml" "$solver" "$TMP/b10s.csv"
      walk_series "$TMP/b10s.csv" >"$TMP/b10s_series.csv"
      [ "$seed" = 0 ] && cp "$TMP/b10s_series.csv" "$OUT/b10_steep_$solver.csv"
      echo "$seed,$(walk_row "$solver" "$TMP/b10s_series.csv" "$TMP/summary.json")" >>"$runs"
    done
  done
  b10steep_summary
}

# the summary and plots of results/b10_steep_runs.csv
b10steep_summary() {
  # per solver over its runs: mean, sample standard deviation, min and max of the mean forward
  # velocity (after the first second) and of the end x; its difference from ncp-pgs's mean in %
  # and in Welch's t (the difference over the standard error of the two means); runs with a
  # fall, the lowest end height, the geometric mean and the largest eps_abs, mean iterations
  # and steps not converged per run
  awk -F, 'NR == 1 { next }
    { s = $2; if (!(s in n)) order[++ns] = s; k = ++n[s]; v[s, k] = $3; x[s, k] = $7
      if ($15 > 0) fell[s]++; if (!(s in zmin) || $9 < zmin[s]) zmin[s] = $9
      if ($6 > 0) { le[s] += log($6); ne[s]++ } if ($12 > emax[s]) emax[s] = $12
      it[s] += $11; nc[s] += $13 }
    function stats(a, s, m,   i, t, t2) { t = t2 = 0; lo[0] = hi[0] = a[s, 1]
      for (i = 1; i <= m; i++) { t += a[s, i]; if (a[s, i] < lo[0]) lo[0] = a[s, i]; if (a[s, i] > hi[0]) hi[0] = a[s, i] }
      mean[0] = t / m; for (i = 1; i <= m; i++) t2 += (a[s, i] - mean[0]) ^ 2
      sd[0] = m > 1 ? sqrt(t2 / (m - 1)) : 0 }
    END { print "solver,runs,v_fwd_mean,v_fwd_sd,v_fwd_min,v_fwd_max,x_end_mean_m,x_end_sd_m,dv_vs_ncp_pgs_pct,welch_t_vs_ncp_pgs,runs_with_falls,z_end_min_m,geomean_eps_abs_N,max_eps_abs_N,mean_iterations,not_converged_per_run"
      stats(v, "ncp-pgs", n["ncp-pgs"]); rm = mean[0]; rs = sd[0]; rn = n["ncp-pgs"]
      for (j = 1; j <= ns; j++) { s = order[j]; m = n[s]
        stats(v, s, m); vm = mean[0]; vs = sd[0]; vlo = lo[0]; vhi = hi[0]
        stats(x, s, m); se = sqrt(vs * vs / m + rs * rs / rn)
        printf "%s,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.2f,%.2f,%d,%.4f,%.3g,%.4g,%.4g,%.4g\n", s, m, vm, vs,
          vlo, vhi, mean[0], sd[0], 100 * (vm - rm) / rm, (se > 0 ? (vm - rm) / se : 0), fell[s] + 0,
          zmin[s], ne[s] ? exp(le[s] / ne[s]) : 0, emax[s], it[s] / m, nc[s] / m } }' \
    "$OUT/b10_steep_runs.csv" >"$OUT/b10_steep_summary.csv"
  # shellcheck disable=SC2086
  walk_plot b10_steep 'B10 steep ground (wavelength 1.2 m, slopes to 14.7 deg), mu = 0.3, seed 0' $RIGID
  plot <<GP
set output 'b10_steep_spread.png'
set multiplot layout 1,2 title 'B10 steep ground: $B10_SEEDS runs per solver from perturbed initial poses (points), mean +- sd (bars)'
set xtics rotate by -45 font ',8'; set key off; set xrange [-0.5:9.5]
set title 'mean forward velocity after 1 s (m/s); target 0.3'; set ylabel 'm/s'
plot 'b10_steep_summary.csv' u 0:3:4:xtic(1) every ::1 w yerrorbars lw 2 pt 7 lc rgb '#1f77b4', \\
  $(i=0; for s in $RIGID; do printf "'b10_steep_runs.csv' u (pick(2, '%s', %d)):(column(3)) every ::1 w p pt 6 lc rgb '#7f7f7f', " "$s" "$i"; i=$((i + 1)); done) 0.3 w l dt 2 lc rgb 'black'
set title 'end x (m) after 5 s'; set ylabel 'm'
plot 'b10_steep_summary.csv' u 0:7:8:xtic(1) every ::1 w yerrorbars lw 2 pt 7 lc rgb '#1f77b4', \\
  $(i=0; sep=""; for s in $RIGID; do printf "%s'b10_steep_runs.csv' u (pick(2, '%s', %d)):(column(7)) every ::1 w p pt 6 lc rgb '#7f7f7f'" "$sep" "$s" "$i"; sep=", "; i=$((i + 1)); done)
unset multiplot
GP
}

# B11: a fixed budget of 20 iterations per step (eps_abs 0 so that no solver stops early, and
# solver.retry false so that no solve is run again: cold after a warm start that did not
# converge, or without push-out)
b11() {
  log "B11 raisim, raisim-ds and ncp-pgs at a fixed iteration budget on the bumpy ground"
  walk b11 scenes/b10_solo_trot_bumpy.yaml \
    'B11 bumpy ground, mu = 0.3, 20 iterations per step' "raisim raisim-ds ncp-pgs" \
    --set solver.max_iter=20 --set solver.eps_abs=0 --set solver.retry=false
  b11crit
}

# B11 on both stopping criteria: with eps_abs 0 neither stops a solve early, but the best iterate
# returned at the budget is the best on the criterion in use
b11crit() {
  log "B11 on its own criterion and on the NCP criterion"
  walk_criteria b11 scenes/b10_solo_trot_bumpy.yaml "raisim raisim-ds ncp-pgs" \
    --set solver.max_iter=20 --set solver.eps_abs=0 --set solver.retry=false
}

# QPCC: the supplementary document's particle, the sliding block and the planar hopper built
# from its scene, each search's answer against the best of every contact mode's QP solved on
# its own (--enumerate)
qpcc_row() {
  local name=$1 target=$2 json=$TMP/qpcc.json
  shift 2
  "$MOREAU" qpcc "$@" --json --enumerate >"$json"
  local status mode obj enum modes qps
  status=$(tr ',{}' '\n\n\n' <"$json" | awk -F'"' '$2 == "status" { print $4 }')
  mode=$(tr ',{}' '\n\n\n' <"$json" | awk -F'"' '$2 == "mode" { printf "%s%s", s, $4; s = " " }')
  obj=$(json_num "$json" objective | head -1)
  enum=$(json_num "$json" objective | tail -1)
  modes=$(json_num "$json" modes)
  qps=$(json_num "$json" qp_solved)
  echo "$name,$target,$status,${mode:-none},$qps,$obj,$modes,$enum" |
    awk -F, -v OFS=, '{ d = $6 - $8; print $0, (d < 0 ? -d : d) }' >>"$OUT/qpcc.csv"
}

qpcc() {
  log "QPCC: the search against enumeration of the contact modes"
  echo "problem,target,status,modes,qp_solved,objective,enumerated_modes,enumerated_best,difference" >"$OUT/qpcc.csv"
  qpcc_row jumping-particle - scenes/qpcc/jumping-particle.json
  qpcc_row sliding-block - scenes/qpcc/sliding-block.json
  local t
  for t in "slide_x=0" "slide_x=0.5" "slide_x=-2" "slide_z=0.5" "slide_z=-1"; do
    qpcc_row hopper "$t" --scene scenes/qpcc/hopper.yaml --target "$t"
  done
  column -s, -t <"$OUT/qpcc.csv" >&2
}

main() {
  local all="B1 B2 B3 B4 B5 B6 B7 B8 B9 B10 B11 QPCC" exp
  for exp in ${@:-$all}; do
    "$(echo "$exp" | tr 'A-Z' 'a-z')"
  done
}
main "$@"
