#!/usr/bin/python3
"""Carry a moreau scene's PD gains and its robot's joint limits into a MuJoCo model of
bench/mjcf (the models bench/peers.c steps beside moreau), so that both simulate the same robot.

For every hinge joint of the MJCF that the URDF names:
  - damping = the URDF's <dynamics damping> + the scene's kd (moreau integrates k_d and damping
    implicitly; MuJoCo's Euler integrator treats joint damping implicitly too);
  - limited="true" range="lower upper" from the URDF's <limit> when the joint is revolute or
    prismatic (moreau's scenes enforce them by default: joint_limits true), limited="false" for
    continuous joints;
and every <position> actuator on such a joint gets kp = the scene's kp and forcerange = ± the
URDF effort (moreau clamps the PD torque to the URDF effort). The joint's Coulomb friction is
left out on both sides (moreau does not model it).

Usage: tools/bench_mjcf.py MODEL.xml ROBOT.urdf KP KD   (rewrites MODEL.xml in place)
"""
import re
import sys
import xml.etree.ElementTree as ET


def urdf_joints(path):
    joints = {}
    for j in ET.parse(path).getroot().iter("joint"):
        lim = j.find("limit")
        dyn = j.find("dynamics")
        joints[j.get("name")] = {
            "type": j.get("type"),
            "lower": float(lim.get("lower", 0)) if lim is not None else None,
            "upper": float(lim.get("upper", 0)) if lim is not None else None,
            "effort": float(lim.get("effort", 0)) if lim is not None else 0.0,
            "damping": float(dyn.get("damping", 0)) if dyn is not None else 0.0,
        }
    return joints


def fmt(x):
    return "%.10g" % x


def set_attr(tag, name, value):
    """tag with attribute name set to value (replaced, or added before the closing '/>')"""
    if re.search(r'\b%s="[^"]*"' % name, tag):
        return re.sub(r'\b%s="[^"]*"' % name, '%s="%s"' % (name, value), tag)
    return re.sub(r"\s*/>$", ' %s="%s"/>' % (name, value), tag)


def joint_tag(tag, joints, kd):
    name = re.search(r'name="([^"]*)"', tag).group(1)
    j = joints.get(name) or joints.get(name.split("/", 1)[-1])
    if j is None or 'type="hinge"' not in tag and 'type="slide"' not in tag:
        return tag
    tag = set_attr(tag, "damping", fmt(j["damping"] + kd))
    limited = j["type"] in ("revolute", "prismatic") and j["lower"] is not None
    tag = set_attr(tag, "limited", "true" if limited else "false")
    if limited:
        tag = set_attr(tag, "range", "%s %s" % (fmt(j["lower"]), fmt(j["upper"])))
    return tag


def actuator_tag(tag, joints, kp):
    name = re.search(r'joint="([^"]*)"', tag).group(1)
    j = joints.get(name) or joints.get(name.split("/", 1)[-1])
    if j is None:
        return tag
    tag = set_attr(tag, "kp", fmt(kp))
    if j["effort"] > 0:
        tag = set_attr(tag, "forcelimited", "true")
        tag = set_attr(tag, "forcerange", "%s %s" % (fmt(-j["effort"]), fmt(j["effort"])))
    return tag


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    model, urdf, kp, kd = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    joints = urdf_joints(urdf)
    text = open(model).read()
    text = re.sub(r"<joint [^>]*/>", lambda m: joint_tag(m.group(0), joints, kd), text)
    text = re.sub(r"<position [^>]*/>", lambda m: actuator_tag(m.group(0), joints, kp), text)
    open(model, "w").write(text)


if __name__ == "__main__":
    main()
