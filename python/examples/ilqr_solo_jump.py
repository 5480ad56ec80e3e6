#!/usr/bin/python3
"""iLQR through contact: a whole jump of Solo-12 (push-off, flight, landing), from Python.

The controls are the 12 joint torques of every step, added to the scene's PD posture controller
(scenes/solo_stand.yaml). Over a horizon of N steps the base must follow the ballistic arc through
a given apex (height z_apex at time t_apex, the legs in their standing posture) for a window
around it, and the robot must end standing still where it started (base height, orientation and
position, joint posture, zero velocity), at little torque:

    J(u) = sum_t w_u |u_t|^2 + sum_{t in window} sum_i w_i r_i(x_t)^2 + sum_j w_j r_j(x_N)^2

The optimiser is told nothing about phases: when the feet leave the ground and come back is
decided by the simulator in the rollouts. Each iteration linearises the step along the current
trajectory with the simulator's analytical Jacobians (Sim.step_derivatives: the step with its
contacts sticking, sliding or absent, differentiated in q, v and tau, so the contact changes are
inside the horizon), runs the Riccati backward pass of iLQR (Gauss-Newton Hessians of the
residuals, Levenberg-Marquardt regularisation of Q_uu) and a forward pass with a backtracking
line search on the true (nonlinear, contact) simulator. States are compared in the tangent
space: the base's position in its own frame, its rotation by the quaternion's logarithm, joints
by difference.

At the end the optimised torques are replayed open loop in a fresh simulator from the same state,
and the jump measured there: the highest base height, the time the four feet spend off the
ground, the landing, and the final posture.

    /usr/bin/python3 python/examples/ilqr_solo_jump.py [ITERATIONS] [HORIZON_STEPS] [PLOT.svg|-]
                                                      [HOP_M]

HOP_M (default 0) asks for a forward hop: the robot should land that far ahead (x) of where it
started.

Exit status 0 when every iteration kept or lowered the cost and the run lowered it.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

import moreau  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
G = 9.81
# the farthest a foot's sphere reaches below the trunk (robots/solo12/solo12.urdf): 0.16 m thigh
# and 0.16 m shank below the hip, 0.0595 m of lateral offsets that the abduction joint may turn
# downwards, and the sphere's 0.0191 m: sqrt(0.32^2 + 0.0595^2) + 0.0191 m. With the trunk level
# a base higher than this has all four feet off the ground.
LEG_REACH = 0.3446
Z_APEX = 0.40          # m, base height at the apex (standing: 0.232 m)
T_APEX = 0.35          # s after the start
FLIGHT_WINDOW = 0.08   # s either side of the apex on the ballistic arc
W_U = 1e-3             # per N m^2 per step
W_FLIGHT_Z, W_FLIGHT_VZ, W_FLIGHT_JOINT = 1e5, 1e3, 1e2   # over the window
W_END_Z, W_END_XY, W_END_ROT, W_END_JOINT, W_END_V = 1e4, 1e3, 1e3, 1e2, 1e1


def quat_matrix(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def quat_log_between(qa, qb):
    """the rotation vector of Ra^T Rb (quaternions x, y, z, w)"""
    ax, ay, az, aw = qa
    bx, by, bz, bw = qb
    # conj(a) * b
    w = aw * bw + ax * bx + ay * by + az * bz
    v = np.array([aw * bx - bw * ax - (ay * bz - az * by),
                  aw * by - bw * ay - (az * bx - ax * bz),
                  aw * bz - bw * az - (ax * by - ay * bx)])
    if w < 0:
        w, v = -w, -v
    s = np.linalg.norm(v)
    return v * (2 * np.arctan2(s, w) / s if s > 1e-12 else 2.0)


def difference(qa, qb):
    """qb (-) qa in the tangent space at qa (free-flyer first, then 1-dof joints)"""
    d = np.empty(len(qa) - 1)
    d[:3] = quat_matrix(qa[3:7]).T @ (qb[:3] - qa[:3])
    d[3:6] = quat_log_between(qa[3:7], qb[3:7])
    d[6:] = qb[7:] - qa[7:]
    return d


def skew(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


class Task:
    """the residuals of the flight and of the end, with their Jacobians in the tangent space
    (dq: base translation and rotation in the base frame, joints; then dv)"""

    def __init__(self, x0, nv, horizon, dt, hop=0.0):
        self.q0, self.nv, self.dt, self.horizon = x0[0].copy(), nv, dt, horizon
        self.hop = np.array([hop, 0.0])  # where the base should land, from where it started
        self.t_apex = min(int(round(T_APEX / dt)), horizon - 1)
        half = int(round(FLIGHT_WINDOW / dt))
        self.window = range(max(self.t_apex - half, 1), min(self.t_apex + half, horizon - 1) + 1)

    def residuals(self, t, q, v):
        """[(r, J (len(r) x 2 nv), w)] of the state at step t"""
        nv, out = self.nv, []
        R = quat_matrix(q[3:7])
        if t in self.window:
            # the base on the ballistic arc through the apex, z* - g s^2 / 2 and -g s at
            # s = t - t_apex: d(p_z) = R[2, :] dq_lin; vw = R v_lin, d vw = R dv_lin - R [v_lin]x
            # dtheta (the base turning carries its velocity); the legs in their standing posture
            # so that the base follows the centre of mass
            s, n = (t - self.t_apex) * self.dt, len(self.window)
            J = np.zeros((2, 2 * nv))
            J[0, :3] = R[2, :]
            J[1, nv:nv + 3] = R[2, :]
            J[1, 3:6] = -(R @ skew(v[:3]))[2, :]
            vw = R @ v[:3]
            out.append((np.array([q[2] - (Z_APEX - 0.5 * G * s * s)]), J[:1], W_FLIGHT_Z / n))
            out.append((np.array([vw[2] + G * s]), J[1:], W_FLIGHT_VZ / n))
            J = np.zeros((nv - 6, 2 * nv))
            J[:, 6:nv] = np.eye(nv - 6)
            out.append((q[7:] - self.q0[7:], J, W_FLIGHT_JOINT / n))
        if t == self.horizon:
            J = np.zeros((3, 2 * nv))
            J[:, :3] = R
            dp = q[:3] - self.q0[:3]
            out.append((dp[2:3], J[2:3], W_END_Z))
            out.append((dp[:2] - self.hop, J[:2], W_END_XY))
            # orientation: log(R0^T R), whose Jacobian in dtheta is the inverse right Jacobian
            # of SO(3), the identity up to O(|log|) (Gauss-Newton keeps the identity)
            J = np.zeros((3, 2 * nv))
            J[:, 3:6] = np.eye(3)
            out.append((quat_log_between(self.q0[3:7], q[3:7]), J, W_END_ROT))
            J = np.zeros((nv - 6, 2 * nv))
            J[:, 6:nv] = np.eye(nv - 6)
            out.append((q[7:] - self.q0[7:], J, W_END_JOINT))
            J = np.zeros((nv, 2 * nv))
            J[:, nv:] = np.eye(nv)
            out.append((v.copy(), J, W_END_V))
        return out

    def state_cost(self, qs, vs):
        return sum(w * float(r @ r) for t in list(self.window) + [self.horizon]
                   for r, _, w in self.residuals(t, qs[t], vs[t]))

    def state_derivatives(self, t, q, v):
        """gradient and Gauss-Newton Hessian of the state cost at step t (2 nv)"""
        g, H = np.zeros(2 * self.nv), np.zeros((2 * self.nv, 2 * self.nv))
        for r, J, w in self.residuals(t, q, v):
            g += 2 * w * J.T @ r
            H += 2 * w * J.T @ J
        return g, H


def rollout(sim, x0, us, jacobians=False):
    """the trajectory of the torques us from x0: states, and the step Jacobians if asked"""
    q0, v0 = x0
    sim.time = 0.0
    sim.set_state(q0, v0)
    qs, vs, jac = [q0.copy()], [v0.copy()], []
    for u in us:
        sim.torque[6:] = u
        if jacobians:
            jac.append(sim.step_derivatives())
        else:
            sim.step()
        qs.append(sim.q.copy())
        vs.append(sim.v.copy())
    sim.torque[:] = 0.0
    return np.array(qs), np.array(vs), jac


def cost(task, qs, vs, us):
    return W_U * np.sum(us ** 2) + task.state_cost(qs, vs)


def backward(task, qs, vs, us, jac, mu):
    """the Riccati pass: feedforward ks and gains Ks, or None when Q_uu is not positive"""
    horizon, nu = us.shape
    Vx, Vxx = task.state_derivatives(horizon, qs[-1], vs[-1])
    ks, Ks = [None] * horizon, [None] * horizon
    for t in reversed(range(horizon)):
        d = jac[t]
        A = np.block([[d["dqn_dq"], d["dqn_dv"]], [d["dvn_dq"], d["dvn_dv"]]])
        B = np.vstack([d["dqn_dtau"][:, 6:], d["dvn_dtau"][:, 6:]])
        Qx = A.T @ Vx
        Qu = 2 * W_U * us[t] + B.T @ Vx
        Qxx = A.T @ Vxx @ A
        Quu = 2 * W_U * np.eye(nu) + B.T @ Vxx @ B
        Qux = B.T @ Vxx @ A
        try:
            L = np.linalg.cholesky(Quu + mu * np.eye(nu))
        except np.linalg.LinAlgError:
            return None, None
        k = -np.linalg.solve(L.T, np.linalg.solve(L, Qu))
        K = -np.linalg.solve(L.T, np.linalg.solve(L, Qux))
        ks[t], Ks[t] = k, K
        Vx = Qx + K.T @ Quu @ k + K.T @ Qu + Qux.T @ k
        Vxx = Qxx + K.T @ Quu @ K + K.T @ Qux + Qux.T @ K
        Vxx = 0.5 * (Vxx + Vxx.T)
        if t > 0:
            g, H = task.state_derivatives(t, qs[t], vs[t])
            Vx, Vxx = Vx + g, Vxx + H
    return ks, Ks


def forward(sim, x0, qs, vs, us, ks, Ks, alpha):
    """the new controls u + alpha k + K dx along their own trajectory"""
    sim.time = 0.0
    sim.set_state(*x0)
    new_us = np.empty_like(us)
    nq_traj, nv_traj = [x0[0].copy()], [x0[1].copy()]
    for t in range(len(us)):
        dx = np.concatenate([difference(qs[t], sim.q), sim.v - vs[t]])
        new_us[t] = us[t] + alpha * ks[t] + Ks[t] @ dx
        sim.torque[6:] = new_us[t]
        sim.step()
        nq_traj.append(sim.q.copy())
        nv_traj.append(sim.v.copy())
    sim.torque[:] = 0.0
    return new_us, np.array(nq_traj), np.array(nv_traj)


def ilqr(sim, x0, task, us, iterations):
    qs, vs, _ = rollout(sim, x0, us)
    J = cost(task, qs, vs, us)
    history = [J]
    print(f"iteration  0: cost {J:.6g}, base height at the apex time {qs[task.t_apex][2]:.4f} m")
    mu = 1e-6
    for it in range(1, iterations + 1):
        qs, vs, jac = rollout(sim, x0, us, jacobians=True)
        ks, Ks = backward(task, qs, vs, us, jac, mu)
        accepted = False
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03, 0.01) if ks is not None else ():
            try:
                new_us, nq, nvs = forward(sim, x0, qs, vs, us, ks, Ks, alpha)
            except moreau.MoreauError:
                continue  # a diverging trial: a shorter step
            J_new = cost(task, nq, nvs, new_us)
            if J_new < J:
                us, J, qs, vs, accepted = new_us, J_new, nq, nvs, True
                mu = max(mu / 10, 1e-9)
                break
        if not accepted:
            mu *= 100
        history.append(J)
        print(f"iteration {it:2d}: cost {J:.6g}, base height at the apex time "
              f"{qs[task.t_apex][2]:.4f} m, end {qs[-1][2]:.4f} m, "
              f"step {'accepted' if accepted else 'refused'}, max |u| {np.abs(us).max():.2f} N m")
    return us, history


def replay(world, x0, us, dt):
    """the torques us open loop in a fresh simulator from x0: what the jump achieved"""
    sim = moreau.Sim(world)
    sim.set_state(*x0)
    z, airborne, landed_at, left_at = [], [], None, None
    for t, u in enumerate(us):
        sim.torque[6:] = u
        sim.step()
        z.append(sim.q[2])
        off = len(sim.contacts()) == 0
        airborne.append(off)
        if off and left_at is None:
            left_at = t
        if not off and left_at is not None and landed_at is None:
            landed_at = t
    z, airborne = np.array(z), np.array(airborne)
    return {"apex": z.max(), "apex_time": (int(z.argmax()) + 1) * dt,
            "flight": airborne.sum() * dt,
            "takeoff": None if left_at is None else (left_at + 1) * dt,
            "landing": None if landed_at is None else (landed_at + 1) * dt,
            "end_q": sim.q.copy(), "end_v": sim.v.copy()}


def fmt(t):
    return "none" if t is None else f"{t:.3f}"


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    horizon = int(sys.argv[2]) if len(sys.argv) > 2 else 700
    plot = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "-" else None
    hop = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
    sim = moreau.Sim(world)
    sim.step(100)  # settle on the feet
    x0 = (sim.q.copy(), sim.v.copy())
    dt = world.timestep
    task = Task(x0, world.nv, horizon, dt, hop)
    start = time.time()
    us, history = ilqr(sim, x0, task, np.zeros((horizon, world.nv - 6)), iterations)
    elapsed = time.time() - start
    print(f"{iterations} iterations over {horizon} steps in {elapsed:.1f} s")
    r = replay(world, x0, us, dt)
    tilt = np.degrees(np.linalg.norm(quat_log_between(x0[0][3:7], r["end_q"][3:7])))
    print(f"replay: apex {r['apex']:.4f} m at {r['apex_time']:.3f} s (target {Z_APEX} m at "
          f"{task.t_apex * dt:.3f} s), feet off the ground {r['flight'] * 1e3:.0f} ms "
          f"(take-off {fmt(r['takeoff'])} s, landing {fmt(r['landing'])} s)")
    moved = r["end_q"][:2] - x0[0][:2]
    print(f"replay: end base height {r['end_q'][2]:.4f} m (start {x0[0][2]:.4f} m), moved "
          f"({moved[0] * 1e3:.1f}, {moved[1] * 1e3:.1f}) mm (target ({hop * 1e3:.0f}, 0) mm), "
          f"tilt {tilt:.2f} deg, "
          f"joints off by {np.abs(r['end_q'][7:] - x0[0][7:]).max():.4f} rad at most, "
          f"|v| {np.linalg.norm(r['end_v']):.4f}")
    print(f"jump: apex {r['apex']:.4f} airborne {r['flight']:.3f} end_height {r['end_q'][2]:.4f} "
          f"start_height {x0[0][2]:.4f} end_tilt {tilt:.3f} end_speed "
          f"{np.linalg.norm(r['end_v']):.4f}")
    if r["apex"] > LEG_REACH:
        print(f"the base rose above {LEG_REACH} m, out of the legs' reach of the ground")
    if plot:
        write_plot(plot, history)
        print(f"cost per iteration written to {plot}")
    ok = history[-1] < history[0] and all(b <= a for a, b in zip(history, history[1:]))
    print("cost decreased" if ok else "cost did not decrease")
    return 0 if ok else 1


def write_plot(path, history):
    """the cost per iteration on a logarithmic axis, as a small SVG"""
    W, H, M = 480, 300, 50
    logs = np.log10(np.maximum(history, 1e-300))
    lo, hi = np.floor(logs.min()), np.ceil(logs.max())
    hi = hi if hi > lo else lo + 1
    n = max(len(history) - 1, 1)
    pts = " ".join(f"{M + (W - 2 * M) * i / n:.1f},{H - M - (H - 2 * M) * (y - lo) / (hi - lo):.1f}"
                   for i, y in enumerate(logs))
    ticks = "".join(f'<text x="{M - 8}" y="{H - M - (H - 2 * M) * (e - lo) / (hi - lo) + 4:.1f}" '
                    f'text-anchor="end" font-size="11">1e{int(e)}</text>'
                    for e in np.arange(lo, hi + 1))
    with open(path, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}">'
                f'<rect width="{W}" height="{H}" fill="white"/>'
                f'<line x1="{M}" y1="{H - M}" x2="{W - M}" y2="{H - M}" stroke="black"/>'
                f'<line x1="{M}" y1="{M}" x2="{M}" y2="{H - M}" stroke="black"/>{ticks}'
                f'<text x="{W / 2}" y="{H - 15}" text-anchor="middle" font-size="12">'
                f'iLQR iteration (0 to {n})</text>'
                f'<text x="{W / 2}" y="25" text-anchor="middle" font-size="13">'
                f'Solo-12 jump: cost per iteration</text>'
                f'<polyline points="{pts}" fill="none" stroke="#1f5fbf" stroke-width="2"/></svg>\n')


if __name__ == "__main__":
    sys.exit(main())
