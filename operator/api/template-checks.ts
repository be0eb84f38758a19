/**
 * The Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards, v1.36) as CEL
 * over a Sandbox's pod template, one check per control. `ok` is CEL over `variables.template` (the pod spec)
 * and `variables.podSecurity` (its securityContext), plus `c` (each container of every list), `v` (each
 * volume) or `k` (each key of `variables.annotations`, the template's metadata.annotations). The first failing check is the one the API server reports, so the most telling come first.
 */

export type TemplateCheck = {
  readonly level: 'baseline' | 'restricted';
  readonly on: 'pod' | 'container' | 'volume' | 'annotation';
  /**
   * The field, relative to the pod spec (pod), or the suffix after `containers[name]` / `volumes[name]`;
   * unused for an annotation, which is named by its key.
   */
  readonly field: string;
  readonly rule: string;
  readonly ok: string;
};

const list = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;
export const BASELINE_CAPABILITIES = [
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
];
const SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SELINUX_TYPES = ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'];
const RESTRICTED_VOLUMES = [
  'name',
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

const sc = 'c.?securityContext';
const hostNamespace = (field: string): TemplateCheck => ({
  level: 'baseline',
  on: 'pod',
  field,
  rule: 'must be unset or false',
  ok: `!variables.template.?${field}.orValue(false)`,
});
const seLinux = (of: string) =>
  `${of}.?seLinuxOptions.?type.orValue('') in ${list(SELINUX_TYPES)} && ` +
  `${of}.?seLinuxOptions.?user.orValue('') == '' && ${of}.?seLinuxOptions.?role.orValue('') == ''`;

export const TEMPLATE_CHECKS: readonly TemplateCheck[] = [
  // baseline
  {
    level: 'baseline',
    on: 'container',
    field: '.securityContext.privileged',
    rule: 'must be unset or false',
    ok: `!${sc}.?privileged.orValue(false)`,
  },
  hostNamespace('hostNetwork'),
  hostNamespace('hostPID'),
  hostNamespace('hostIPC'),
  {
    level: 'baseline',
    on: 'volume',
    field: '.hostPath',
    rule: 'is not allowed (hostPath volumes)',
    ok: '!has(v.hostPath)',
  },
  {
    level: 'baseline',
    on: 'container',
    field: '.securityContext.capabilities.add',
    rule: `may add only ${BASELINE_CAPABILITIES.join(', ')}`,
    ok: `${sc}.?capabilities.?add.orValue([]).all(a, a in ${list(BASELINE_CAPABILITIES)})`,
  },
  {
    level: 'baseline',
    on: 'container',
    field: '.ports[*].hostPort',
    rule: 'must be unset or 0',
    ok: 'c.?ports.orValue([]).all(p, p.?hostPort.orValue(0) == 0)',
  },
  {
    level: 'baseline',
    on: 'pod',
    field: 'securityContext.windowsOptions.hostProcess',
    rule: 'must be unset or false',
    ok: '!variables.podSecurity.?windowsOptions.?hostProcess.orValue(false)',
  },
  {
    level: 'baseline',
    on: 'container',
    field: '.securityContext.windowsOptions.hostProcess',
    rule: 'must be unset or false',
    ok: `!${sc}.?windowsOptions.?hostProcess.orValue(false)`,
  },
  {
    level: 'baseline',
    on: 'pod',
    field: 'securityContext.seccompProfile',
    rule: 'must not be Unconfined',
    ok: "variables.podSecurity.?seccompProfile.?type.orValue('') != 'Unconfined'",
  },
  {
    level: 'baseline',
    on: 'container',
    field: '.securityContext.seccompProfile',
    rule: 'must not be Unconfined',
    ok: `${sc}.?seccompProfile.?type.orValue('') != 'Unconfined'`,
  },
  {
    level: 'baseline',
    on: 'pod',
    field: 'securityContext.appArmorProfile',
    rule: 'must not be Unconfined',
    ok: "variables.podSecurity.?appArmorProfile.?type.orValue('') != 'Unconfined'",
  },
  {
    level: 'baseline',
    on: 'container',
    field: '.securityContext.appArmorProfile',
    rule: 'must not be Unconfined',
    ok: `${sc}.?appArmorProfile.?type.orValue('') != 'Unconfined'`,
  },
  {
    level: 'baseline',
    on: 'annotation',
    field: '',
    rule: 'must be runtime/default or localhost/<profile>',
    ok:
      "!k.startsWith('container.apparmor.security.beta.kubernetes.io/') || " +
      "variables.annotations[k] in ['', 'runtime/default'] || variables.annotations[k].startsWith('localhost/')",
  },
  {
    level: 'baseline',
    on: 'pod',
    field: 'securityContext.seLinuxOptions',
    rule: `may set only type (one of ${SELINUX_TYPES.slice(1).join(', ')})`,
    ok: seLinux('variables.podSecurity'),
  },
  {
    level: 'baseline',
    on: 'container',
    field: '.securityContext.seLinuxOptions',
    rule: `may set only type (one of ${SELINUX_TYPES.slice(1).join(', ')})`,
    ok: seLinux(sc),
  },
  {
    level: 'baseline',
    on: 'container',
    field: '.securityContext.procMount',
    rule: 'must be unset or Default',
    ok: `${sc}.?procMount.orValue('Default') == 'Default'`,
  },
  {
    level: 'baseline',
    on: 'pod',
    field: 'securityContext.sysctls',
    rule: `may set only ${SAFE_SYSCTLS.join(', ')}`,
    ok: `variables.podSecurity.?sysctls.orValue([]).all(s, s.name in ${list(SAFE_SYSCTLS)})`,
  },
  // restricted
  {
    level: 'restricted',
    on: 'container',
    field: '.securityContext.runAsNonRoot',
    rule: 'must be true (here or in the pod securityContext)',
    ok: `${sc}.?runAsNonRoot.orValue(variables.podSecurity.?runAsNonRoot.orValue(false))`,
  },
  {
    level: 'restricted',
    on: 'pod',
    field: 'securityContext.runAsUser',
    rule: 'must not be 0',
    ok: 'variables.podSecurity.?runAsUser.orValue(1) != 0',
  },
  {
    level: 'restricted',
    on: 'container',
    field: '.securityContext.runAsUser',
    rule: 'must not be 0',
    ok: `${sc}.?runAsUser.orValue(1) != 0`,
  },
  {
    level: 'restricted',
    on: 'container',
    field: '.securityContext.allowPrivilegeEscalation',
    rule: 'must be false',
    ok: `${sc}.?allowPrivilegeEscalation.orValue(true) == false`,
  },
  {
    level: 'restricted',
    on: 'container',
    field: '.securityContext.seccompProfile',
    rule: 'must be RuntimeDefault or Localhost (here or in the pod securityContext)',
    ok:
      `${sc}.?seccompProfile.?type.orValue(variables.podSecurity.?seccompProfile.?type.orValue('')) ` +
      "in ['RuntimeDefault', 'Localhost']",
  },
  {
    level: 'restricted',
    on: 'container',
    field: '.securityContext.capabilities',
    rule: 'must drop ALL and may add only NET_BIND_SERVICE',
    ok:
      `'ALL' in ${sc}.?capabilities.?drop.orValue([]) && ` +
      `${sc}.?capabilities.?add.orValue([]).all(a, a == 'NET_BIND_SERVICE')`,
  },
  {
    level: 'restricted',
    on: 'volume',
    field: '',
    rule: `must be one of the volume types ${RESTRICTED_VOLUMES.slice(1).join(', ')}`,
    ok: `v.all(k, k in ${list(RESTRICTED_VOLUMES)})`,
  },
];
