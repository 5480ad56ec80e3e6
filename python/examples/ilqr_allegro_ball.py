#!/usr/bin/python3
"""iLQR through contact between moving bodies: the Allegro hand turning the ball it holds.

The scene is scenes/b8_allegro_hold.yaml (the right hand, palm up, under its PD posture
controller, holds a ball of 0.1 kg and 35 mm radius in the corner between palm and fingers),
settled for 200 steps. The controls are the 16 joint torques of every step, added to the PD; the
task is to turn the ball by THETA about AXIS (the world's vertical; BALL_AXIS="x y z" in the
environment changes it) within the horizon while
keeping it where it is, at little torque:

    J(u) = W_U sum_t |u_t|^2 + W_R |rot(R_N R_0^T) - THETA AXIS|^2 + W_P |p_N - p_0|^2

with rot the rotation vector. The ball touches the palm (static) and the fingers' links (moving),
so the step's Jacobians (Sim.step_derivatives) differentiate contacts between two moving bodies.
Each iteration linearises the step along the current trajectory with them, runs a Riccati
backward pass (terminal cost by Gauss-Newton, its residual's Jacobian by central differences
along the tangent space; Levenberg-Marquardt damping of the control Hessian) and a forward pass
with feedback and a backtracking line search on the true simulator.

The ball is a free body: mr_sim integrates it in the world velocity of its centre of mass while
the Jacobians follow q (+) dt v (docs/derivatives.md, "Not done"); they are then a close but not
exact linearisation of its spin, which only slows the iterations (every cost is the simulator's).

    /usr/bin/python3 python/examples/ilqr_allegro_ball.py [ITERATIONS] [HORIZON_STEPS] [PLOT.svg]

Exit status 0 when the cost decreased over the run and no iteration raised it.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

import moreau  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
THETA = 0.3                        # rad about AXIS
W_U, W_R, W_P = 1e-3, 1e2, 1e4     # torque, rotation, position weights
AXIS = np.array([float(a) for a in os.environ.get("BALL_AXIS", "0 0 1").split()])
NB = 6                             # the ball's dofs come first (a free joint), then the hand's


def rotation(q):
    """the rotation matrix of a quaternion (x, y, z, w)"""
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def rotvec(R):
    """the rotation vector of R (angle below pi)"""
    c = np.clip((np.trace(R) - 1) / 2, -1.0, 1.0)
    a = np.arccos(c)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return w / 2 if a < 1e-9 else w * a / (2 * np.sin(a))


def expm(w):
    """the rotation matrix exp([w]x) (Rodrigues)"""
    a = np.linalg.norm(w)
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    if a < 1e-12:
        return np.eye(3) + K
    return np.eye(3) + np.sin(a) / a * K + (1 - np.cos(a)) / a ** 2 * K @ K


class Pose:
    """the ball's position and rotation, and the hand's joints, from q (free joint first)"""

    def __init__(self, q):
        self.p, self.R, self.joints = q[:3].copy(), rotation(q[3:7]), q[7:].copy()

    def moved(self, dq):
        """q (+) dq to first order: the ball's twist in its own frame, the joints added"""
        out = Pose.__new__(Pose)
        out.p = self.p + self.R @ dq[:3]
        out.R = self.R @ expm(dq[3:6])
        out.joints = self.joints + dq[NB:]
        return out

    def minus(self, other):
        """self (-) other in the tangent space at other"""
        return np.concatenate([other.R.T @ (self.p - other.p), rotvec(other.R.T @ self.R),
                               self.joints - other.joints])


def residual(pose, start):
    """the terminal cost's residual, weighted: J_terminal = |residual|^2"""
    turn = rotvec(pose.R @ start.R.T) - THETA * AXIS
    return np.concatenate([np.sqrt(W_R) * turn, np.sqrt(W_P) * (pose.p - start.p)])


def simulate(sim, x0, controls, feedback=None, jacobians=False):
    """a rollout from x0: the poses, velocities, applied controls and (if asked) Jacobians.
    feedback = (poses, velocities, gains, alpha, ks) applies u = u_ref + alpha k + K dx"""
    sim.time = 0.0
    sim.set_state(*x0)
    poses, vels, applied, jac = [Pose(sim.q)], [sim.v.copy()], [], []
    for t, u in enumerate(controls):
        if feedback is not None:
            ref_poses, ref_vels, gains, alpha, ks = feedback
            dx = np.concatenate([poses[-1].minus(ref_poses[t]), vels[-1] - ref_vels[t]])
            u = u + alpha * ks[t] + gains[t] @ dx
        sim.torque[NB:] = u
        if jacobians:
            jac.append(sim.step_derivatives())
        else:
            sim.step()
        poses.append(Pose(sim.q))
        vels.append(sim.v.copy())
        applied.append(u)
    sim.torque[:] = 0.0
    return poses, vels, np.array(applied), jac


def total_cost(poses, controls):
    return W_U * float(np.sum(controls ** 2)) + float(np.sum(residual(poses[-1], poses[0]) ** 2))


def terminal_model(pose, start, nv):
    """gradient and Gauss-Newton Hessian of the terminal cost over (dq, dv)"""
    r = residual(pose, start)
    Jr = np.zeros((len(r), 2 * nv))
    eps = 1e-6
    for k in range(nv):
        e = np.zeros(nv)
        e[k] = eps
        Jr[:, k] = (residual(pose.moved(e), start) - residual(pose.moved(-e), start)) / (2 * eps)
    return 2 * Jr.T @ r, 2 * Jr.T @ Jr


def backward(jac, controls, Vx, Vxx, damping):
    """the Riccati recursion: feedforward steps ks and gains Ks"""
    horizon, nu = controls.shape
    ks, Ks = [None] * horizon, [None] * horizon
    for t in range(horizon - 1, -1, -1):
        d = jac[t]
        fx = np.block([[d["dqn_dq"], d["dqn_dv"]], [d["dvn_dq"], d["dvn_dv"]]])
        fu = np.vstack([d["dqn_dtau"][:, NB:], d["dvn_dtau"][:, NB:]])
        Qu = 2 * W_U * controls[t] + fu.T @ Vx
        Quu = 2 * W_U * np.eye(nu) + fu.T @ Vxx @ fu
        Qux = fu.T @ Vxx @ fx
        reg = Quu + damping * np.eye(nu)
        ks[t] = -np.linalg.solve(reg, Qu)
        Ks[t] = -np.linalg.solve(reg, Qux)
        Vx = fx.T @ Vx + Ks[t].T @ (Quu @ ks[t] + Qu) + Qux.T @ ks[t]
        Vxx = fx.T @ Vxx @ fx + Ks[t].T @ Quu @ Ks[t] + Ks[t].T @ Qux + Qux.T @ Ks[t]
        Vxx = (Vxx + Vxx.T) / 2
    return ks, Ks


def optimise(iterations, horizon):
    os.chdir(ROOT)  # the scene names its robot's URDF relative to the repository
    sim = moreau.Sim(moreau.World(os.path.join("scenes", "b8_allegro_hold.yaml")))
    sim.step(200)
    x0 = (sim.q.copy(), sim.v.copy())
    nv = len(x0[1])
    controls = np.zeros((horizon, nv - NB))
    poses, vels, controls, _ = simulate(sim, x0, controls)
    cost = total_cost(poses, controls)
    history, damping = [cost], 1e-4
    report(0, cost, poses, controls, None)
    for it in range(1, iterations + 1):
        poses, vels, controls, jac = simulate(sim, x0, controls, jacobians=True)
        Vx, Vxx = terminal_model(poses[-1], poses[0], nv)
        ks, Ks = backward(jac, controls, Vx, Vxx, damping)
        accepted = False
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03):
            trial = simulate(sim, x0, controls, feedback=(poses, vels, Ks, alpha, ks))
            trial_cost = total_cost(trial[0], trial[2])
            if trial_cost < cost:
                poses, vels, controls, _ = trial
                cost, accepted = trial_cost, True
                damping = max(damping / 10, 1e-8)
                break
        if not accepted:
            damping *= 100
        history.append(cost)
        report(it, cost, poses, controls, accepted)
    return history


def report(it, cost, poses, controls, accepted):
    turn = rotvec(poses[-1].R @ poses[0].R.T)
    moved = np.linalg.norm(poses[-1].p - poses[0].p)
    state = "" if accepted is None else (", step accepted" if accepted else ", step refused")
    print(f"iteration {it:2d}: cost {cost:.6g}, ball turned {turn[2]:+.4f} rad about z "
          f"(|other| {np.linalg.norm(turn[:2]):.4f}), moved {1e3 * moved:.2f} mm, "
          f"max |u| {np.abs(controls).max():.3f} N m{state}")


def plot(path, history):
    """the cost per iteration on a linear axis from its smallest to its largest value (SVG)"""
    W, H, M = 480, 300, 60
    y = np.array(history, dtype=float)
    lo, hi = y.min(), y.max()
    hi = hi if hi > lo else lo + 1.0
    n = max(len(history) - 1, 1)

    def px(i, v):
        return M + (W - 2 * M) * i / n, H - M - (H - 2 * M) * (v - lo) / (hi - lo)
    line = " ".join("%.1f,%.1f" % px(i, v) for i, v in enumerate(y))
    labels = "".join('<text x="%d" y="%.1f" text-anchor="end" font-size="11">%.4g</text>'
                     % (M - 8, px(0, v)[1] + 4, v) for v in (lo, hi))
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">'
           '<rect width="%d" height="%d" fill="white"/>' % (W, H, W, H)
           + '<path d="M%d %d V%d H%d" fill="none" stroke="black"/>' % (M, M, H - M, W - M)
           + labels
           + '<text x="%d" y="%d" text-anchor="middle" font-size="12">iLQR iteration (0 to %d)'
             '</text>' % (W // 2, H - 15, n)
           + '<text x="%d" y="25" text-anchor="middle" font-size="13">Allegro hand turning a '
             'ball: cost per iteration</text>' % (W // 2)
           + '<polyline points="%s" fill="none" stroke="#b5471b" stroke-width="2"/></svg>\n'
           % line)
    with open(path, "w") as f:
        f.write(svg)


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    horizon = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    out = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    history = optimise(iterations, horizon)
    if out:
        plot(out, history)
        print(f"cost per iteration written to {out}")
    ok = history[-1] < history[0] and all(b <= a for a, b in zip(history, history[1:]))
    print("cost decreased" if ok else "cost did not decrease")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
