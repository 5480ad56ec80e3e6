/* The MJCF schema of MuJoCo 2.2.2: which elements may appear inside which, with which
 * attributes. A file MuJoCo 2.2.2 would refuse as a schema violation (an unknown element or
 * attribute, e.g. one introduced by a later MuJoCo) is refused here with its file, line and
 * name; what moreau then does with each known element is decided where it is read (mjcf.c,
 * docs/mjcf.md). <worldbody> holds what <body> holds. */
#include <string.h>

#include "io/mjcf_internal.h"

typedef struct {
  const char *parent, *name, *attrs; /* attrs: space-separated, padded with spaces */
} schema_entry;

#define JOINT_ATTRS                                                                                \
  " type group pos axis springdamper limited solreflimit solimplimit solreffriction"               \
  " solimpfriction stiffness range margin ref springref armature damping frictionloss user "
#define GEOM_ATTRS                                                                                 \
  " type pos quat contype conaffinity condim group priority size material friction mass"           \
  " density shellinertia solmix solref solimp margin gap fromto axisangle xyaxes zaxis euler"      \
  " hfield mesh fitscale rgba fluidshape fluidcoef user "
#define SITE_ATTRS                                                                                 \
  " type group pos quat material size fromto axisangle xyaxes zaxis euler rgba user "
#define CAMERA_ATTRS " fovy ipd pos quat axisangle xyaxes zaxis euler mode user "
#define LIGHT_ATTRS                                                                                \
  " pos dir directional castshadow active attenuation cutoff exponent ambient diffuse"             \
  " specular mode "
#define TENDON_ATTRS                                                                               \
  " group limited range solreflimit solimplimit solreffriction solimpfriction frictionloss"        \
  " springlength width material margin stiffness damping rgba user "
#define ACT_COMMON " ctrllimited forcelimited ctrlrange forcerange gear cranklength user group "
#define ACT_TARGET                                                                                 \
  " name class group ctrllimited forcelimited ctrlrange forcerange lengthrange gear"               \
  " cranklength user joint jointinparent tendon slidersite cranksite site refsite "
#define SENSOR_SITE " name site cutoff noise user "
#define SENSOR_JOINT " name joint cutoff noise user "
#define SENSOR_TENDON " name tendon cutoff noise user "
#define SENSOR_ACT " name actuator cutoff noise user "
#define SENSOR_FRAME " name objtype objname reftype refname cutoff noise user "
#define SENSOR_BODY " name body cutoff noise user "

static const schema_entry schema[] = {
    {"", "mujoco", " model "},
    {"mujoco", "compiler",
     " autolimits boundmass boundinertia settotalmass balanceinertia strippath coordinate angle"
     " fitaabb eulerseq meshdir texturedir discardvisual convexhull usethread fusestatic"
     " inertiafromgeom inertiagrouprange exactmeshinertia "},
    {"compiler", "lengthrange",
     " mode useexisting uselimit accel maxforce timeconst timestep inttotal inteval tolrange "},
    {"mujoco", "option",
     " timestep apirate impratio tolerance noslip_tolerance mpr_tolerance gravity wind magnetic"
     " density viscosity o_margin o_solref o_solimp integrator collision cone jacobian solver"
     " iterations noslip_iterations mpr_iterations "},
    {"option", "flag",
     " constraint equality frictionloss limit contact passive gravity clampctrl warmstart"
     " filterparent actuation refsafe sensor override energy fwdinv sensornoise multiccd "},
    {"mujoco", "size",
     " njmax nconmax nstack nuserdata nkey nuser_body nuser_jnt nuser_geom nuser_site nuser_cam"
     " nuser_tendon nuser_actuator nuser_sensor "},
    {"mujoco", "visual", " "},
    {"visual", "global", " fovy ipd azimuth elevation linewidth glow offwidth offheight "},
    {"visual", "quality", " shadowsize offsamples numslices numstacks numquads "},
    {"visual", "headlight", " ambient diffuse specular active "},
    {"visual", "map",
     " stiffness stiffnessrot force torque alpha fogstart fogend znear zfar haze shadowclip"
     " shadowscale actuatortendon "},
    {"visual", "scale",
     " forcewidth contactwidth contactheight connect com camera light selectpoint jointlength"
     " jointwidth actuatorlength actuatorwidth framelength framewidth constraint slidercrank "},
    {"visual", "rgba",
     " fog haze force inertia joint actuator actuatornegative actuatorpositive com camera light"
     " selectpoint connect contactpoint contactforce contactfriction contacttorque contactgap"
     " rangefinder constraint slidercrank crankbroken "},
    {"mujoco", "statistic", " meaninertia meanmass meansize extent center "},
    {"mujoco", "default", " class "},
    {"default", "default", " class "},
    {"default", "mesh", " scale "},
    {"default", "material",
     " texture emission specular shininess reflectance rgba texrepeat texuniform "},
    {"default", "joint", JOINT_ATTRS},
    {"default", "geom", GEOM_ATTRS},
    {"default", "site", SITE_ATTRS},
    {"default", "camera", CAMERA_ATTRS},
    {"default", "light", LIGHT_ATTRS},
    {"default", "pair", " condim friction solref solimp gap margin "},
    {"default", "equality", " active solref solimp "},
    {"default", "tendon", TENDON_ATTRS},
    {"default", "general",
     " ctrllimited forcelimited actlimited ctrlrange forcerange actrange gear cranklength user"
     " group dyntype gaintype biastype dynprm gainprm biasprm "},
    {"default", "motor", ACT_COMMON},
    {"default", "position", ACT_COMMON "kp "},
    {"default", "velocity", ACT_COMMON "kv "},
    {"default", "intvelocity", ACT_COMMON "actrange kp "},
    {"default", "damper", " forcelimited ctrlrange forcerange gear cranklength user group kv "},
    {"default", "cylinder", ACT_COMMON "timeconst area diameter bias "},
    {"default", "muscle", ACT_COMMON "timeconst range force scale lmin lmax vmax fpmax fvmax "},
    {"default", "adhesion", " forcelimited ctrlrange forcerange gain user group "},
    {"mujoco", "custom", " "},
    {"custom", "numeric", " name size data "},
    {"custom", "text", " name data "},
    {"custom", "tuple", " name "},
    {"tuple", "element", " objtype objname prm "},
    {"mujoco", "asset", " "},
    {"asset", "texture",
     " name type file gridsize gridlayout fileright fileleft fileup filedown filefront fileback"
     " builtin rgb1 rgb2 mark markrgb random width height hflip vflip "},
    {"asset", "hfield", " name file nrow ncol size "},
    {"asset", "mesh",
     " name class file vertex normal texcoord face refpos refquat scale smoothnormal "},
    {"asset", "skin", " name file material rgba inflate vertex texcoord face group "},
    {"skin", "bone", " body bindpos bindquat vertid vertweight "},
    {"asset", "material",
     " name class texture texrepeat texuniform emission specular shininess reflectance rgba "},
    {"mujoco", "worldbody", " "},
    {"body", "body", " name childclass pos quat mocap axisangle xyaxes zaxis euler user "},
    {"body", "inertial", " pos quat mass diaginertia axisangle xyaxes zaxis euler fullinertia "},
    {"body", "joint", " name class" JOINT_ATTRS},
    {"body", "freejoint", " name group "},
    {"body", "geom", " name class" GEOM_ATTRS},
    {"body", "site", " name class" SITE_ATTRS},
    {"body", "camera", " name class target" CAMERA_ATTRS},
    {"body", "light", " name class target" LIGHT_ATTRS},
    {"body", "composite",
     " prefix type count spacing offset flatinertia solrefsmooth solimpsmooth "},
    {"composite", "joint",
     " kind group stiffness damping armature solreffix solimpfix limited range margin"
     " solreflimit solimplimit frictionloss solreffriction solimpfriction "},
    {"composite", "tendon",
     " kind group stiffness damping solreffix solimpfix limited range margin solreflimit"
     " solimplimit frictionloss solreffriction solimpfriction material rgba width "},
    {"composite", "skin", " texcoord material group rgba inflate subgrid "},
    {"composite", "geom",
     " type contype conaffinity condim group priority size material rgba friction mass density"
     " solmix solref solimp margin gap "},
    {"composite", "site", " group size material rgba "},
    {"composite", "pin", " coord "},
    {"mujoco", "contact", " "},
    {"contact", "pair", " name class geom1 geom2 condim friction solref solimp gap margin "},
    {"contact", "exclude", " name body1 body2 "},
    {"mujoco", "equality", " "},
    {"equality", "connect", " name class body1 body2 anchor active solref solimp "},
    {"equality", "weld",
     " name class body1 body2 relpose anchor active solref solimp torquescale "},
    {"equality", "joint", " name class joint1 joint2 polycoef active solref solimp "},
    {"equality", "tendon", " name class tendon1 tendon2 polycoef active solref solimp "},
    {"equality", "distance", " name class geom1 geom2 distance active solref solimp "},
    {"mujoco", "tendon", " "},
    {"tendon", "spatial", " name class" TENDON_ATTRS},
    {"spatial", "site", " site "},
    {"spatial", "geom", " geom sidesite "},
    {"spatial", "pulley", " divisor "},
    {"tendon", "fixed",
     " name class group limited range solreflimit solimplimit solreffriction solimpfriction"
     " frictionloss springlength margin stiffness damping user "},
    {"fixed", "joint", " joint coef "},
    {"mujoco", "actuator", " "},
    {"actuator", "general",
     ACT_TARGET "actlimited actrange body dyntype gaintype biastype dynprm gainprm biasprm "},
    {"actuator", "motor", ACT_TARGET},
    {"actuator", "position", ACT_TARGET "kp "},
    {"actuator", "velocity", ACT_TARGET "kv "},
    {"actuator", "intvelocity", ACT_TARGET "actrange kp "},
    {"actuator", "damper",
     " name class group forcelimited ctrlrange forcerange lengthrange gear cranklength user"
     " joint jointinparent tendon slidersite cranksite site refsite kv "},
    {"actuator", "cylinder", ACT_TARGET "timeconst area diameter bias "},
    {"actuator", "muscle",
     " name class group ctrllimited forcelimited ctrlrange forcerange lengthrange gear"
     " cranklength user joint jointinparent tendon slidersite cranksite timeconst range force"
     " scale lmin lmax vmax fpmax fvmax "},
    {"actuator", "adhesion", " name class group forcelimited ctrlrange forcerange user body gain "},
    {"mujoco", "sensor", " "},
    {"sensor", "touch", SENSOR_SITE},
    {"sensor", "accelerometer", SENSOR_SITE},
    {"sensor", "velocimeter", SENSOR_SITE},
    {"sensor", "gyro", SENSOR_SITE},
    {"sensor", "force", SENSOR_SITE},
    {"sensor", "torque", SENSOR_SITE},
    {"sensor", "magnetometer", SENSOR_SITE},
    {"sensor", "rangefinder", SENSOR_SITE},
    {"sensor", "jointpos", SENSOR_JOINT},
    {"sensor", "jointvel", SENSOR_JOINT},
    {"sensor", "tendonpos", SENSOR_TENDON},
    {"sensor", "tendonvel", SENSOR_TENDON},
    {"sensor", "actuatorpos", SENSOR_ACT},
    {"sensor", "actuatorvel", SENSOR_ACT},
    {"sensor", "actuatorfrc", SENSOR_ACT},
    {"sensor", "ballquat", SENSOR_JOINT},
    {"sensor", "ballangvel", SENSOR_JOINT},
    {"sensor", "jointlimitpos", SENSOR_JOINT},
    {"sensor", "jointlimitvel", SENSOR_JOINT},
    {"sensor", "jointlimitfrc", SENSOR_JOINT},
    {"sensor", "tendonlimitpos", SENSOR_TENDON},
    {"sensor", "tendonlimitvel", SENSOR_TENDON},
    {"sensor", "tendonlimitfrc", SENSOR_TENDON},
    {"sensor", "framepos", SENSOR_FRAME},
    {"sensor", "framequat", SENSOR_FRAME},
    {"sensor", "framexaxis", SENSOR_FRAME},
    {"sensor", "frameyaxis", SENSOR_FRAME},
    {"sensor", "framezaxis", SENSOR_FRAME},
    {"sensor", "framelinvel", SENSOR_FRAME},
    {"sensor", "frameangvel", SENSOR_FRAME},
    {"sensor", "framelinacc", " name objtype objname cutoff noise user "},
    {"sensor", "frameangacc", " name objtype objname cutoff noise user "},
    {"sensor", "subtreecom", SENSOR_BODY},
    {"sensor", "subtreelinvel", SENSOR_BODY},
    {"sensor", "subtreeangmom", SENSOR_BODY},
    {"sensor", "clock", " name cutoff noise user "},
    {"sensor", "user", " name objtype objname datatype needstage dim cutoff noise user "},
    {"mujoco", "keyframe", " "},
    {"keyframe", "key", " name time qpos qvel act mpos mquat ctrl "},
};
#define NSCHEMA ((int)(sizeof schema / sizeof schema[0]))

/* the schema entry of element n inside an element called parent (worldbody reads as body) */
static const schema_entry *entry(const char *parent, const char *name) {
  if (!strcmp(parent, "worldbody")) parent = "body";
  for (int i = 0; i < NSCHEMA; ++i)
    if (!strcmp(schema[i].parent, parent) && !strcmp(schema[i].name, name)) return &schema[i];
  return NULL;
}

/* " word " occurs in the padded list */
static int listed(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
    if (p[-1] == ' ' && p[n] == ' ') return 1;
  return 0;
}

/* the names a parent allows, for the message */
static void children_of(const char *parent, char *out, size_t len) {
  out[0] = '\0';
  if (!strcmp(parent, "worldbody")) parent = "body";
  for (int i = 0; i < NSCHEMA; ++i)
    if (!strcmp(schema[i].parent, parent))
      snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? ", " : "", schema[i].name);
}

static mr_status check(mj_ctx *c, const xmlNode *n, const char *parent) {
  const schema_entry *e = entry(parent, mj_name(n));
  if (!e) {
    char known[400];
    children_of(parent, known, sizeof known);
    return mj_fail(c, n, MR_ERR_PARSE,
                   "unrecognized element <%s> inside <%s> (MuJoCo 2.2.2's schema; known: %s)",
                   mj_name(n), parent[0] ? parent : "(document)", known[0] ? known : "none");
  }
  for (const xmlAttr *a = n->properties; a; a = a->next)
    if (!listed(e->attrs, (const char *)a->name))
      return mj_fail(c, n, MR_ERR_PARSE,
                     "unrecognized attribute '%s' of <%s> (MuJoCo 2.2.2's schema: a later "
                     "MuJoCo's, or a misspelling)",
                     (const char *)a->name, mj_name(n));
  for (const xmlNode *k = mj_first(n); k; k = mj_next(k))
    if (check(c, k, mj_name(n))) return mj_status(c);
  return MR_OK;
}

mr_status mj_schema_check(mj_ctx *c, const xmlNode *root) {
  return check(c, root, "");
}
