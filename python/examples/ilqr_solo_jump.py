#!/usr/bin/python3
"""iLQR through contact: Solo-12 pushing off the ground for a jump, from Python.

The controls are the 12 joint torques of every step, added to the scene's PD posture controller
(scenes/solo_stand.yaml); the task is to leave the horizon T with the base at height z* and
rising at vz* (a take-off), at little torque:

    J(u) = sum_t w_u |u_t|^2 + w_z (z_N - z*)^2 + w_v (vz_N - vz*)^2 + w_h |v_N,horizontal|^2

Each iteration linearises the step along the current trajectory with the simulator's analytical
Jacobians (Sim.step_derivatives: the step with its contacts, sticking or sliding, differentiated
in q, v and tau), runs the Riccati backward pass of iLQR (Levenberg-Marquardt regularisation of
Q_uu) and a forward pass with a backtracking line search on the true (nonlinear, contact)
simulator. States are compared in the tangent space: the base's position in its own frame, its
rotation by the quaternion's logarithm, joints by difference.

Prints the cost of every iteration and writes the cost per iteration as an SVG plot.

    /usr/bin/python3 python/examples/ilqr_solo_jump.py [ITERATIONS] [HORIZON_STEPS] [PLOT.svg]

Exit status 0 when the cost decreased over the run (and every iteration kept or lowered it).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

import moreau  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
Z_GOAL, VZ_GOAL = 0.26, 0.8           # m, m/s at the end of the horizon
W_U, W_Z, W_V, W_H = 1e-3, 1e4, 1e2, 1e1


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


def cost(qs, vs, us):
    z, v = qs[-1][2], vs[-1]
    R = quat_matrix(qs[-1][3:7])
    vw = R @ v[:3]  # the base's linear velocity in the world
    return (W_U * np.sum(us ** 2) + W_Z * (z - Z_GOAL) ** 2 + W_V * (vw[2] - VZ_GOAL) ** 2
            + W_H * (vw[0] ** 2 + vw[1] ** 2))


def terminal_derivatives(q, v, nv):
    """gradient and Gauss-Newton Hessian of the terminal cost in (dq, dv) (2 nv)"""
    R = quat_matrix(q[3:7])
    vw = R @ v[:3]
    # residuals r and their Jacobians in the tangent space: dz = R[2,:] dq_lin,
    # d vw = R dv_lin (the base's rotation's effect on vw is left to the next iterations)
    rows, res, w = [], [], []
    g = np.zeros(2 * nv)
    H = np.zeros((2 * nv, 2 * nv))
    jz = np.zeros(2 * nv)
    jz[:3] = R[2, :]
    rows.append(jz), res.append(q[2] - Z_GOAL), w.append(W_Z)
    for k, (target, wk) in enumerate(((0.0, W_H), (0.0, W_H), (VZ_GOAL, W_V))):
        jv = np.zeros(2 * nv)
        jv[nv:nv + 3] = R[k, :]
        rows.append(jv), res.append(vw[k] - target), w.append(wk)
    for j, r, wk in zip(rows, res, w):
        g += 2 * wk * r * j
        H += 2 * wk * np.outer(j, j)
    return g, H


def ilqr(iterations, horizon, plot):
    world = moreau.World(os.path.join(ROOT, "scenes", "solo_stand.yaml"))
    sim = moreau.Sim(world)
    sim.step(100)  # settle on the feet
    x0 = (sim.q.copy(), sim.v.copy())
    nv, nu = world.nv, world.nv - 6
    us = np.zeros((horizon, nu))
    qs, vs, _ = rollout(sim, x0, us)
    J = cost(qs, vs, us)
    history = [J]
    print(f"iteration  0: cost {J:.6g}, base height {qs[-1][2]:.4f} m, "
          f"vertical speed {(quat_matrix(qs[-1][3:7]) @ vs[-1][:3])[2]:+.4f} m/s")
    mu = 1e-6
    for it in range(1, iterations + 1):
        qs, vs, jac = rollout(sim, x0, us, jacobians=True)
        # backward pass
        Vx, Vxx = terminal_derivatives(qs[-1], vs[-1], nv)
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
            Quu_r = Quu + mu * np.eye(nu)
            k = -np.linalg.solve(Quu_r, Qu)
            K = -np.linalg.solve(Quu_r, Qux)
            ks[t], Ks[t] = k, K
            Vx = Qx + K.T @ Quu @ k + K.T @ Qu + Qux.T @ k
            Vxx = Qxx + K.T @ Quu @ K + K.T @ Qux + Qux.T @ K
            Vxx = 0.5 * (Vxx + Vxx.T)
        # forward pass with a line search
        accepted = False
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03, 0.01):
            sim.time = 0.0
            sim.set_state(*x0)
            new_us = np.empty_like(us)
            nq_traj, nv_traj = [x0[0].copy()], [x0[1].copy()]
            for t in range(horizon):
                dx = np.concatenate([difference(qs[t], sim.q), sim.v - vs[t]])
                new_us[t] = us[t] + alpha * ks[t] + Ks[t] @ dx
                sim.torque[6:] = new_us[t]
                sim.step()
                nq_traj.append(sim.q.copy())
                nv_traj.append(sim.v.copy())
            sim.torque[:] = 0.0
            nq_traj, nv_traj = np.array(nq_traj), np.array(nv_traj)
            J_new = cost(nq_traj, nv_traj, new_us)
            if J_new < J:
                us, J, qs, vs, accepted = new_us, J_new, nq_traj, nv_traj, True
                mu = max(mu / 10, 1e-9)
                break
        if not accepted:
            mu *= 100
        history.append(J)
        vz = (quat_matrix(qs[-1][3:7]) @ vs[-1][:3])[2]
        print(f"iteration {it:2d}: cost {J:.6g}, base height {qs[-1][2]:.4f} m, "
              f"vertical speed {vz:+.4f} m/s, step {'accepted' if accepted else 'refused'}, "
              f"max |u| {np.abs(us).max():.3f} N m")
    if plot:
        write_plot(plot, history)
        print(f"cost per iteration written to {plot}")
    return history


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
                f'Solo-12 push-off: cost per iteration</text>'
                f'<polyline points="{pts}" fill="none" stroke="#1f5fbf" stroke-width="2"/></svg>\n')


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    horizon = int(sys.argv[2]) if len(sys.argv) > 2 else 120
    plot = sys.argv[3] if len(sys.argv) > 3 else None
    history = ilqr(iterations, horizon, plot)
    ok = history[-1] < history[0] and all(b <= a for a, b in zip(history, history[1:]))
    print("cost decreased" if ok else "cost did not decrease")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
