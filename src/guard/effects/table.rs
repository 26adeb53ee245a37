//! The program specs: data, one entry per program family. A new program is an entry here, not
//! new rule code: name it, list the options that take a value, and give each subcommand or
//! option shape the effect it has. [`super::judge`] decides what each effect means.
//!
//! Besides the specs, two lists: [`QUIET`], programs known to only read, build or test (they
//! pass quietly even when handed a system path), and the programs whose paths are written
//! (for the place-based judgement of writes).

use super::spec::{Clause, Does, Program, Val, When};
use crate::guard::needles::Needles;

/// Security services whose stop, disable or mask tears down a protection (unit-name prefixes).
const SECURITY_SERVICES: &[&str] = &[
    "firewalld",
    "ufw",
    "nftables",
    "iptables",
    "ip6tables",
    "netfilter-persistent",
    "ipfw",
    "shorewall",
    "csf",
    "lfd",
    "apparmor",
    "auditd",
    "selinux",
    "fail2ban",
    "clamav",
    "clamd",
    "falco",
    "osqueryd",
    "wazuh",
    "ossec",
    "falcon-sensor",
    "sysmon",
    "aide",
    "crowdsec",
    "rsyslog",
    "syslog",
    "systemd-journald",
    // BSD's packet filter and its log.
    "pf",
    // Endpoint protection and detection agents.
    "mdatp",
    "wdavdaemon",
    "sentinelone",
    "sentinel-agent",
    "cbagentd",
    "cbdaemon",
    "elastic-agent",
    "auditbeat",
    "velociraptor",
    "sav-protect",
    "sophos",
    "kesl",
    "esets",
    "snort",
    "suricata",
    "zeek",
    "tripwire",
];

/// Names of security, audit and monitoring agents (EDR, antivirus, host intrusion detection,
/// log shippers) as they appear anywhere in a process name, a pattern, a unit or a control
/// program's path: stopping or killing one, whatever the spelling, tears down a protection.
const AGENT_TOKENS: &[&str] = &[
    "wazuh",
    "ossec",
    "osquery",
    "falcon-sensor",
    "falcond",
    "falconctl",
    "crowdstrike",
    "sentinelone",
    "sentinelctl",
    "sentinel-agent",
    "sentineld",
    "s1-agent",
    "cbagent",
    "cbdaemon",
    "cbsensor",
    "carbonblack",
    "sophos",
    "mdatp",
    "wdavdaemon",
    "clamd",
    "clamav",
    "freshclam",
    "auditd",
    "auditbeat",
    "filebeat",
    "elastic-agent",
    "elastic-endpoint",
    "velociraptor",
    "tetragon",
    "tanium",
    "qualys",
    "ir_agent",
    "rapid7",
    "cylance",
    "traps_pmd",
    "cortex-xdr",
    "splunk",
    "fluent-bit",
    "fluentd",
    "td-agent",
    "rsyslog",
    "syslog-ng",
    "crowdsec",
    "fail2ban",
    "suricata",
    "snort",
    "zeek",
    "sysmon",
    "bitdefender",
    "ds_agent",
    "trendmicro",
    "mcafee",
    "trellix",
    "xagt",
    "nxlog",
    "esets",
    "kesl",
    "kaspersky",
    "laurel",
    "go-audit",
];

/// ImageMagick's `import` options that take a value (`-frame` and `-screen` are flags).
const IMPORT_VALUE_OPTIONS: &[&str] = &[
    "-window",
    "-display",
    "-crop",
    "-resize",
    "-geometry",
    "-delay",
    "-pause",
];

/// Whether `word` names a security service or agent: a unit name led by one of
/// [`SECURITY_SERVICES`], or any word holding one of [`AGENT_TOKENS`] (`wazuh-control`,
/// `/opt/CrowdStrike/falconctl`, `'sentinel|s1-agent'`).
pub fn names_security_agent(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    let unit = lower.rsplit('/').next().unwrap_or(&lower);
    SECURITY_SERVICES.iter().any(|s| unit.starts_with(s)) || names_agent(&lower)
}

/// Whether `word` holds one of [`AGENT_TOKENS`] (a process name or pattern: `'sentinel|s1-agent'`).
pub fn names_agent(word: &str) -> bool {
    static AGENT: Needles = Needles::ignoring_case(AGENT_TOKENS);
    AGENT.found_in(word)
}

/// Process names that stand for a whole class of processes: killing them by name hits every
/// one of them on the machine, not the process the agent started.
pub const BROAD_PROCESS_NAMES: &[&str] = &[
    "python",
    "python3",
    "python2",
    "node",
    "nodejs",
    "java",
    "ruby",
    "perl",
    "php",
    "bash",
    "sh",
    "zsh",
    "dash",
    "fish",
    "go",
    "dotnet",
    "deno",
    "bun",
    "sshd",
    "ssh",
    "systemd",
    "init",
    "dockerd",
    "docker",
    "containerd",
    "kubelet",
    "nginx",
    "apache2",
    "httpd",
    "postgres",
    "mysqld",
    "mongod",
    "redis-server",
    "chrome",
    "chromium",
    "firefox",
    "code",
    "cursor",
    "claude",
    "codex",
    "gemini",
    "tmux",
    "screen",
    "cron",
    "crond",
    "rsyslogd",
    "journald",
    "dbus-daemon",
    "xorg",
    "gnome-shell",
    "pulseaudio",
    "pipewire",
    "npm",
    "cargo",
    "rustc",
    "gcc",
    "make",
    "vim",
    "nvim",
    "emacs",
    "sudo",
    "su",
    "login",
    "agetty",
    "getty",
    "auditd",
    "firewalld",
    ".",
    ".*",
];

const DOCKER_VALUE_OPTS: &[&str] = &[
    // Global options, before the subcommand (`docker -H unix:///run/d.sock run ..`).
    "-H",
    "--host",
    "--context",
    "--config",
    "--log-level",
    "--url",
    "--connection",
    "-v",
    "--volume",
    "--mount",
    "-p",
    "--publish",
    "-e",
    "--env",
    "--env-file",
    "--name",
    "-w",
    "--workdir",
    "-u",
    "--user",
    "--network",
    "--net",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--cgroupns",
    "--cap-add",
    "--cap-drop",
    "--security-opt",
    "--device",
    "--entrypoint",
    "-h",
    "--hostname",
    "-l",
    "--label",
    "--platform",
    "--restart",
    "-m",
    "--memory",
    "--cpus",
    "--add-host",
    "--gpus",
    "--tmpfs",
    "--log-driver",
    "--dns",
    "--ulimit",
    "--shm-size",
    "-c",
    "--cpu-shares",
];

/// `docker run`-shaped effects, shared by every container runtime and its `run` spellings.
macro_rules! container_clauses {
    ($($sub:expr),*) => {
        &[$(
            Clause { sub: $sub, when: When::Any(&["--privileged"]), does: Does::Escape("a privileged container holds every capability of the host") },
            Clause { sub: $sub, when: When::Value(&["-v", "--volume", "--mount"], Val::HostMount), does: Does::Escape("mounts the host's root, system directories or container socket into the container") },
            Clause { sub: $sub, when: When::Value(&["--pid", "--ipc", "--userns", "--uts", "--cgroupns"], Val::Is(&["host"])), does: Does::Escape("shares the host's namespaces with the container") },
            Clause { sub: $sub, when: When::Value(&["-v", "--volume", "--mount"], Val::HomeMount), does: Does::HostAccess("mounts the home directory into the container: its keys and credentials go with it") },
            Clause { sub: $sub, when: When::Value(&["--cap-add"], Val::Is(&["all", "sys_admin", "cap_sys_admin", "sys_ptrace", "cap_sys_ptrace", "sys_module", "cap_sys_module", "dac_read_search", "cap_dac_read_search", "sys_rawio"])), does: Does::Escape("grants the container a capability that reaches the host") },
            Clause { sub: $sub, when: When::Value(&["--security-opt"], Val::Contains(&["apparmor=unconfined", "apparmor:unconfined", "seccomp=unconfined", "seccomp:unconfined", "label=disable", "label:disable", "systempaths=unconfined"])), does: Does::Escape("turns the container's confinement off") },
            Clause { sub: $sub, when: When::Value(&["-e", "--env"], Val::Contains(&["host_auth_method=trust", "allow_empty_password=yes", "allow_empty_password=1", "allow_empty_password=true", "_random_root_password=no", "xpack.security.enabled=false", "auth=none", "authentication_disabled=true", "protected_mode=no"])), does: Does::AuthOff },
            Clause { sub: $sub, when: When::Either(&When::Any(&["-P", "--publish-all"]), &When::Value(&["-p", "--publish"], Val::NotLoopback)), does: Does::ExposedService },
        )*]
    };
}

/// Verbs of cloud and deployment CLIs that delete what they name.
const DESTROY_VERBS: &[&str] = &[
    "delete",
    "destroy",
    "drop",
    "purge",
    "terminate",
    "apps:destroy",
    "uninstall",
    "reset",
    "terminate-instances",
    "delete-stack",
    "delete-cluster",
    "delete-db-instance",
    "delete-bucket",
    "delete-table",
    "rb",
];

/// Subcommand groups of cloud CLIs that manage the CLI itself on this machine (its settings,
/// logins, extensions, chart repositories), not the account's resources.
const LOCAL_GROUPS: &[&str] = &[
    "config",
    "configure",
    "auth",
    "extension",
    "extensions",
    "components",
    "plugin",
    "plugins",
    "repo",
    "context",
    "contexts",
    "profile",
    "completion",
];

/// Whether a cloud CLI's words manage the CLI itself (`kubectl config delete-context`,
/// `gcloud config configurations delete`): the group must be the very word after the program,
/// since an option the table does not know may take the next word as its value (`aws --query
/// config s3 rb ..` deletes a bucket). Chart repositories (`repo`) are left to the clauses that
/// read them: `gh repo delete` is a repository deleted.
pub(crate) fn manages_the_cli_itself(argv: &[String]) -> bool {
    argv.get(1)
        .is_some_and(|w| w != "repo" && LOCAL_GROUPS.contains(&w.as_str()))
}

/// Verbs of cloud and deployment CLIs that stop what they name (`aws ec2 stop-instances`,
/// `az vm deallocate`, `railway down`, `flux suspend`).
const STOP_VERBS: &[&str] = &[
    "stop",
    "stop-instances",
    "reboot-instances",
    "deallocate",
    "power-off",
    "poweroff",
    "power_off",
    "shutdown",
    "halt",
    "suspend",
    "hibernate",
    "down",
    "reboot",
    "ps:stop",
    "apps:stop",
];

/// Cloud CLI verbs that grant an identity a role or a policy.
const GRANT_VERBS: &[&str] = &[
    "create",
    "add-iam-policy-binding",
    "set-iam-policy",
    "attach-user-policy",
    "attach-role-policy",
    "attach-group-policy",
    "add-policy-binding",
];

/// The top role of a cloud account or cluster, by its name.
const TOP_ROLES: &[&str] = &["owner", "roles/owner", "cluster-admin"];

/// The options that name the role or policy granted.
const ROLE_OPTIONS: &[&str] = &["--role", "--clusterrole", "--policy-arn"];

/// The top role of a cloud account, by the end of its identifier.
const TOP_ROLE_SUFFIXES: &[&str] = &[":policy/administratoraccess"];

/// Cloud CLI verbs that stop an account's audit trail, configuration recording or threat
/// detection.
const AUDIT_OFF_VERBS: &[&str] = &[
    "stop-logging",
    "stop-configuration-recorder",
    "disable-security-hub",
    "disable-macie",
    "disassociate-from-master-account",
    "disassociate-from-administrator-account",
];

/// `pass` and `gopass` subcommands that do not show an entry (`pass NAME` does).
const PASS_SUBCOMMANDS: &[&str] = &[
    "init",
    "ls",
    "list",
    "find",
    "search",
    "insert",
    "add",
    "edit",
    "generate",
    "rm",
    "remove",
    "delete",
    "mv",
    "move",
    "cp",
    "copy",
    "git",
    "help",
    "version",
    "setup",
    "sync",
    "config",
    "mounts",
    "recipients",
    "templates",
    "audit",
    "fsck",
    "clone",
    "create",
    "new",
    "update",
    "grep",
    "history",
    "alias",
    "completion",
    "env",
    "fscopy",
    "fsmove",
    "link",
    "unclip",
    "age",
    "convert",
    "process",
    "pwgen",
    "rcs",
    "otp",
    "show",
    "cat",
];

/// What a capture filter or field names when it goes after logins.
const CREDENTIAL_TRAFFIC: &[&str] = &[
    "authorization",
    "cookie",
    "passw",
    "pass ",
    "pass|",
    "credential",
    "token",
    "secret",
    "login",
    "ftp",
    "telnet",
    "pop3",
    "imap",
    "port 21",
    "port 23",
    "port 110",
    "port 143",
];

/// systemd-run's options that make a timer of the command: a schedule, not a wrapper (the
/// wrapper unwrapping in `carriers` keeps such a command whole for its spec).
pub const TIMER_OPTIONS: &[&str] = &[
    "--on-calendar",
    "--on-boot",
    "--on-startup",
    "--on-unit-active",
    "--on-unit-inactive",
    "--on-active",
    "--timer-property",
];

/// A copy to a host that is not this machine (scp, sftp, rsync, pscp).
const COPY_TO_REMOTE: &[Clause] = &[Clause {
    sub: &[],
    when: When::Arg(Val::Remote),
    does: Does::CopyToRemote,
}];

/// Every program with a spec.
/// Methods of the login manager (and session managers) that take the machine down, as a
/// D-Bus call names them (case aside).
const POWER_METHODS: &[&str] = &[
    "reboot",
    "poweroff",
    "halt",
    "kexec",
    "shutdown",
    "powerdown",
    "logoutandreboot",
    "logoutandshutdown",
    // The systemd targets a `StartUnit` call starts (`string:reboot.target`).
    "reboot.target",
    "poweroff.target",
    "halt.target",
    "kexec.target",
    "string:reboot.target",
    "string:poweroff.target",
    "string:halt.target",
    "rebootwithflags",
    "poweroffwithflags",
    "haltwithflags",
    "kexecwithflags",
];

/// The same methods as the last part of a dotted name (`org.freedesktop.login1.Manager.Reboot`).
const POWER_METHOD_SUFFIXES: &[&str] = &[
    ".reboot",
    ".poweroff",
    ".halt",
    ".kexec",
    ".shutdown",
    ".rebootwithflags",
    ".poweroffwithflags",
    ".haltwithflags",
    ".kexecwithflags",
];

/// ipmitool's options that take a value (the interface, the host and its login, timeouts).
const IPMITOOL_VALUE_OPTIONS: &[&str] = &[
    "-I", "-H", "-U", "-P", "-p", "-L", "-f", "-k", "-y", "-C", "-N", "-R", "-T", "-t", "-b", "-m", "-B", "-l", "-o",
    "-O", "-A", "-z", "-D", "-e", "-K", "-Y",
];

pub static PROGRAMS: &[Program] = &[
    Program {
        names: &[
            "az",
            "aws",
            "gcloud",
            "gsutil",
            "eksctl",
            "doctl",
            "fly",
            "flyctl",
            "dokku",
            "vercel",
            "netlify",
            "firebase",
            "pulumi",
            "linode-cli",
            "hcloud",
            "scw",
            "ibmcloud",
            "oci",
            "civo",
            "vultr-cli",
            "railway",
            "render",
            "ko",
            "kubectl",
            "oc",
            "helm",
            "prisma",
            "wrangler",
            "terraform",
            "tofu",
            "cdk",
            "serverless",
            "sls",
            "ansible",
            "nomad",
            "consul",
            "gcp",
            "rclone",
            "exo",
            "argocd",
            "flux",
            "mc",
        ],
        value_opts: &[
            "--address",
            "--port",
            "-n",
            "--name",
            "-g",
            "--resource-group",
            "--region",
            "--profile",
            "--project",
            "--zone",
            "-f",
            "--filename",
            "-l",
            "--selector",
            "--context",
            "--namespace",
            "-o",
            "--output",
            "--app",
            "-a",
            "--subscription",
            "--account",
            "--desired-count",
            "--replicas",
            "--min-instances",
            "--max-instances",
            "--count",
            "--min-replicas",
            "--max-replicas",
            "--require-approval",
            "--role",
            "--clusterrole",
            "--policy-arn",
            "--member",
            "--acl",
            "--public-access",
        ],
        clauses: &[
            // The CLI's own settings and contexts are local (`kubectl config delete-context`):
            // the judge spares them ([`manages_the_cli_itself`]).
            Clause {
                sub: &[],
                when: When::Arg(Val::Is(DESTROY_VERBS)),
                does: Does::DestroyRemote,
            },
            // The account's audit trail or threat detection stopped (`aws cloudtrail
            // stop-logging`, `aws guardduty update-detector --no-enable`): what is done next
            // leaves no record.
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Arg(Val::Is(AUDIT_OFF_VERBS)),
                    &When::Both(
                        &When::Arg(Val::Is(&["update-detector"])),
                        &When::Any(&["--no-enable"]),
                    ),
                ),
                does: Does::SecurityOff("stops the account's audit trail or threat detection: what is done next leaves no record"),
            },
            // An identity given the account's top role (`az role assignment create --role
            // Owner`, `aws iam attach-user-policy --policy-arn ..:policy/AdministratorAccess`,
            // `kubectl create clusterrolebinding x --clusterrole=cluster-admin`).
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Arg(Val::Is(GRANT_VERBS)),
                    &When::Either(
                        &When::Either(
                            &When::Arg(Val::Is(TOP_ROLES)),
                            &When::Arg(Val::Suffix(TOP_ROLE_SUFFIXES)),
                        ),
                        &When::Either(
                            &When::Value(ROLE_OPTIONS, Val::Is(TOP_ROLES)),
                            &When::Value(ROLE_OPTIONS, Val::Suffix(TOP_ROLE_SUFFIXES)),
                        ),
                    ),
                ),
                does: Does::Loosens("grants an identity the account's top role (owner, administrator, cluster-admin): everything the account holds becomes theirs"),
            },
            // A bucket or container opened to anyone on the internet (`gsutil iam ch
            // allUsers:objectViewer gs://b`, `--acl public-read`, `--public-access blob`).
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Either(
                        &When::Arg(Val::Prefix(&["allusers:", "allauthenticatedusers:"])),
                        &When::Value(&["--member"], Val::Is(&["allusers", "allauthenticatedusers"])),
                    ),
                    &When::Either(
                        &When::Arg(Val::Is(&["public-read", "public-read-write"])),
                        &When::Either(
                            &When::Value(&["--acl"], Val::Is(&["public-read", "public-read-write"])),
                            &When::Value(&["--public-access"], Val::Is(&["blob", "container"])),
                        ),
                    ),
                ),
                does: Does::Publish,
            },
            // Machines and workloads stopped, powered off or scaled to nothing.
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Arg(Val::Verb(STOP_VERBS)),
                    // A configuration tool's service module (`-m service -a "name=x state=stopped"`).
                    &When::Value(&["-a", "--args"], Val::Contains(&["state=stopped"])),
                ),
                does: Does::StopRemote,
            },
            // One setting, member or attachment removed (`netlify env:unset`, `az role
            // assignment delete` is a deletion above).
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Arg(Val::Verb(&["unset", "detach", "disable", "revoke", "remove"])),
                    // The CLI's own settings, logins, extensions and repositories are local.
                    &When::Not(&When::First(Val::Is(LOCAL_GROUPS))),
                ),
                does: Does::RemoveRemote,
            },
            // Everything under a prefix of a bucket (`gcloud storage rm --recursive gs://b`,
            // `aws s3 rm --recursive s3://b/`).
            Clause {
                sub: &[],
                when: When::Both(&When::Arg(Val::Is(&["rm"])), &When::Any(&["-r", "--recursive", "-R"])),
                does: Does::DestroyRemote,
            },
            // Tokens printed: `gcloud auth print-access-token`, `az account get-access-token`,
            // `kubectl config view --raw`, `doctl auth token`.
            Clause {
                sub: &[],
                when: When::Arg(Val::Is(&[
                    "print-access-token",
                    "print-identity-token",
                    "get-access-token",
                    "get-session-token",
                    "get-login-password",
                ])),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["config", "view"],
                when: When::Any(&["--raw"]),
                does: Does::ReadSecret,
            },
            // Changes applied without the plan shown for approval.
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Value(&["--require-approval"], Val::Is(&["never"])),
                    &When::Either(
                        &When::Any(&["--skip-preview", "-auto-approve", "--auto-approve"]),
                        &When::Both(&When::Any(&["--prune"]), &When::Any(&["--force"])),
                    ),
                ),
                does: Does::ApplyUnreviewed,
            },
            // A long-lived key for a service account, written to a file.
            Clause {
                sub: &["iam", "service-accounts", "keys", "create"],
                when: When::Always,
                does: Does::ExportSecrets,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Both(&When::Arg(Val::Contains(&["scale"])), &When::Arg(Val::Zero)),
                    &When::Value(
                        &[
                            "--desired-count",
                            "--replicas",
                            "--min-instances",
                            "--max-instances",
                            "--count",
                            "--min-replicas",
                            "--max-replicas",
                        ],
                        Val::Zero,
                    ),
                ),
                does: Does::StopRemote,
            },
            Clause {
                sub: &[],
                when: When::Arg(Val::Prefix(&[
                    "delete-",
                    "destroy-",
                    "terminate-",
                    "deregister-",
                    "purge-",
                ])),
                does: Does::DestroyRemote,
            },
            // Secrets read out of a cloud secret store or an identity: `aws secretsmanager
            // get-secret-value`, `gcloud secrets versions access`, `az keyvault secret show`,
            // `vault kv get`, `kubectl get secret X -o yaml`, `gcloud auth print-access-token`.
            // A new access key printed (`aws iam create-access-key`), the whole state with
            // every secret it holds (`terraform state pull`).
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Arg(Val::Is(&["create-access-key"])),
                    &When::Both(&When::First(Val::Is(&["state"])), &When::Arg(Val::Is(&["pull"]))),
                ),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["secretsmanager"],
                when: When::First(Val::Is(&["get-secret-value", "batch-get-secret-value"])),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["ssm"],
                when: When::Both(
                    &When::First(Val::Prefix(&["get-parameter"])),
                    &When::Any(&["--with-decryption"]),
                ),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["secrets", "versions", "access"],
                when: When::Always,
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["keyvault", "secret"],
                when: When::First(Val::Is(&["show", "download"])),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["get"],
                when: When::Both(
                    &When::First(Val::Is(&["secret", "secrets"])),
                    &When::Value(
                        &["-o", "--output"],
                        Val::Prefix(&["yaml", "json", "jsonpath", "go-template"]),
                    ),
                ),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["configure"],
                when: When::Either(
                    &When::First(Val::Is(&["export-credentials"])),
                    &When::Both(
                        &When::First(Val::Is(&["get"])),
                        &When::Arg(Val::Contains(&["secret", "token"])),
                    ),
                ),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &[],
                when: When::Any(&["--show-secrets"]),
                does: Does::ReadSecret,
            },
            // `kubectl debug node/NAME`: a pod on the node with its root file system mounted and
            // its namespaces shared, by design.
            Clause {
                sub: &["debug"],
                when: When::First(Val::Prefix(&["node/"])),
                does: Does::HostAccess(
                    "starts a debug pod on a node: it holds the node's root file system and namespaces",
                ),
            },
            // `kubectl proxy --address 0.0.0.0`: the cluster's API with the user's rights, for
            // anyone who reaches the port.
            Clause {
                sub: &["proxy"],
                when: When::Value(&["--address"], Val::AllInterfaces),
                does: Does::ExposedService,
            },
            Clause {
                sub: &["proxy"],
                when: When::Always,
                does: Does::AuthOff,
            },
            // `aws s3 sync DIR s3://..`, `gsutil cp F gs://..`, `rclone copy DIR remote:..`: sent
            // to a bucket off this machine.
            Clause {
                sub: &["s3"],
                when: When::Arg(Val::Is(&["cp", "sync", "mv"])),
                does: Does::CopyToRemote,
            },
            Clause {
                sub: &[],
                when: When::Arg(Val::Is(&[
                    "cp", "rsync", "mv", "copy", "sync", "copyto", "moveto", "move",
                ])),
                does: Does::CopyToRemote,
            },
        ],
    },
    // Password managers and secret stores: reading an entry prints the secret (judged only when
    // it reaches the transcript or a file, not when piped into the program that needs it).
    // Subversion's revert of a tree: the working copy's changes under it are gone.
    Program {
        names: &["svn"],
        value_opts: &["--depth", "--changelist", "--cl", "--targets", "--config-dir", "--config-option"],
        clauses: &[Clause {
            sub: &["revert"],
            when: When::Any(&["-R", "--recursive", "--depth"]),
            does: Does::DiscardWorktree,
        }],
    },
    // `zfs rollback -r`: every snapshot newer than the one rolled back to is destroyed.
    Program {
        names: &["zfs"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &["rollback"],
            when: When::Any(&["-r", "-R"]),
            does: Does::DeleteLocalData("rolls a dataset back, destroying every later snapshot"),
        }],
    },
    // `dmesg -C`: the kernel's message buffer emptied.
    Program {
        names: &["dmesg"],
        value_opts: &["-F", "--file", "-f", "--facility", "-l", "--level", "-s", "--buffer-size"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-C", "--clear", "-c", "--read-clear"]),
            does: Does::TracesErased("clears the kernel's message buffer: the record of what happened"),
        }],
    },
    // macOS's `softwareupdate -i -a -R`: installs and restarts the machine.
    Program {
        names: &["softwareupdate"],
        value_opts: &["--product-types", "--os-only"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-R", "--restart"]),
            does: Does::Shutdown,
        }],
    },
    // Mercurial and Jujutsu: the verbs that throw away work or history.
    Program {
        names: &["hg"],
        value_opts: &["-R", "--repository", "--cwd", "-r", "--rev", "-I", "-X", "--config"],
        clauses: &[
            Clause {
                sub: &["update"],
                when: When::Any(&["-C", "--clean"]),
                does: Does::DiscardEverything,
            },
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["purge", "clean"])),
                does: Does::DiscardEverything,
            },
            Clause {
                sub: &["revert"],
                when: When::Any(&["-a", "--all"]),
                does: Does::DiscardEverything,
            },
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["strip", "prune", "rollback"])),
                does: Does::DeleteRefs,
            },
            Clause {
                sub: &["push"],
                when: When::Any(&["-f", "--force"]),
                does: Does::ForcePush,
            },
            Clause {
                sub: &[],
                when: When::Value(&["--config"], Val::Prefix(&["hooks."])),
                does: Does::SkipHooks,
            },
        ],
    },
    Program {
        names: &["jj"],
        value_opts: &[
            "-R",
            "--repository",
            "-r",
            "--revision",
            "--at-op",
            "--config",
            "--from",
            "--to",
            "--into",
        ],
        clauses: &[
            Clause {
                sub: &["bookmark"],
                when: When::First(Val::Is(&["delete", "forget", "d", "f"])),
                does: Does::DeleteRefs,
            },
            Clause {
                sub: &["branch"],
                when: When::First(Val::Is(&["delete", "forget", "d", "f"])),
                does: Does::DeleteRefs,
            },
            // `jj abandon`: the revisions and their changes are dropped; `jj git push
            // --deleted`: bookmarks deleted on the remote too.
            Clause {
                sub: &["abandon"],
                when: When::Always,
                does: Does::DiscardUndoable,
            },
            Clause {
                sub: &["git", "push"],
                when: When::Any(&["--deleted"]),
                does: Does::DeleteRefs,
            },
            // The operation log is jj's undo history.
            Clause {
                sub: &["op"],
                when: When::First(Val::Is(&["abandon"])),
                does: Does::DestroyReflog,
            },
            Clause {
                sub: &["util", "gc"],
                when: When::Any(&["--expire"]),
                does: Does::PruneObjects,
            },
            // `jj restore` without paths: the working copy's changes go (the operation log
            // still holds them).
            Clause {
                sub: &["restore"],
                when: When::Both(
                    &When::Not(&When::Arg(Val::Any)),
                    &When::Not(&When::Any(&["-i", "--interactive"])),
                ),
                does: Does::DiscardUndoable,
            },
        ],
    },
    Program {
        names: &["killall"],
        value_opts: &[
            "-u",
            "--user",
            "-o",
            "--older-than",
            "-y",
            "--younger-than",
            "-s",
            "--signal",
            "-n",
            "--ns",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Value(&["-u", "--user"], Val::Any),
                does: Does::KillUser,
            },
            Clause {
                sub: &[],
                when: When::Always,
                does: Does::KillByName,
            },
        ],
    },
    // Data this machine keeps that nothing brings back.
    Program {
        names: &["systemd-run"],
        value_opts: &[
            "-p",
            "--property",
            "-u",
            "--unit",
            "-E",
            "--setenv",
            "--description",
            "-M",
            "--machine",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(TIMER_OPTIONS),
            does: Does::Persist("starts a timer: a command the system runs later, on a schedule"),
        }],
    },
    Program {
        names: &["trash-empty"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Always,
            does: Does::DeleteLocalData("empties the trash: what was put there is gone"),
        }],
    },
    Program {
        names: &["trash", "trash-cli", "gtrash"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::First(Val::Is(&["empty", "rm", "prune"])),
            does: Does::DeleteLocalData("empties the trash: what was put there is gone"),
        }],
    },
    Program {
        names: &["gio"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &["trash"],
            when: When::Any(&["--empty"]),
            does: Does::DeleteLocalData("empties the trash: what was put there is gone"),
        }],
    },
    Program {
        names: &["rip"],
        value_opts: &["--graveyard"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-d", "--decompose"]),
            does: Does::DeleteLocalData("empties rip's graveyard: what was put there is gone"),
        }],
    },
    Program {
        names: &[
            "timeshift",
            "snapper",
            "restic",
            "borg",
            "kopia",
            "duplicity",
            "rdiff-backup",
        ],
        value_opts: &[
            "--snapshot",
            "-r",
            "--repo",
            "--repository",
            "-c",
            "--config",
            "--keep-last",
            "--keep-daily",
            "--keep-weekly",
            "--keep-monthly",
            "--keep-within",
            "--password-file",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Any(&["--delete", "--delete-all", "--prune"]),
                &When::First(Val::Is(&[
                    "delete",
                    "rm",
                    "remove",
                    "prune",
                    "forget",
                    "remove-older-than",
                ])),
            ),
            does: Does::DeleteLocalData("deletes snapshots or backups: the copies meant to bring data back"),
        }],
    },
    Program {
        names: &["dropuser"],
        value_opts: &["-h", "--host", "-p", "--port", "-U", "--username"],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["--help", "--version"]),
            does: Does::DeleteLocalData("drops a database role, with the rights it held"),
        }],
    },
    Program {
        names: &["pg_resetwal", "pg_resetxlog"],
        value_opts: &["-D", "--pgdata"],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["-n", "--dry-run", "--help", "--version"]),
            does: Does::DeleteLocalData("resets a database's write-ahead log: committed transactions may be lost"),
        }],
    },
    Program {
        names: &["pueue"],
        value_opts: &["-g", "--group"],
        clauses: &[Clause {
            sub: &[],
            when: When::First(Val::Is(&["reset"])),
            does: Does::DeleteLocalData("kills every queued task and forgets them"),
        }],
    },
    Program {
        names: &[
            "iptables-restore",
            "ip6tables-restore",
            "iptables-apply",
            "ebtables-restore",
        ],
        value_opts: &["-M", "--modprobe", "-T", "--table", "-w", "--wait"],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["-t", "--test", "--help"]),
            does: Does::NetworkConfig,
        }],
    },
    Program {
        names: &["apparmor_parser"],
        value_opts: &["-I", "--Include", "-b", "--base", "-L", "--cache-loc", "-o", "--ofile"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-R", "--remove"]),
            does: Does::SecurityOff("removes an AppArmor profile: the program it confined runs unconfined"),
        }],
    },
    Program {
        names: &["semodule"],
        value_opts: &["-s", "--store", "-p", "--path"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-r", "--remove"]),
            does: Does::SecurityPolicy,
        }],
    },
    Program {
        names: &["ncat"],
        value_opts: &[
            "-p",
            "--source-port",
            "-s",
            "--source",
            "-e",
            "--exec",
            "-c",
            "--sh-exec",
            "--lua-exec",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::Any(&["-l", "--listen"]),
                &When::Not(&When::Arg(Val::Prefix(&["127.", "localhost", "::1"]))),
            ),
            does: Does::ExposedService,
        }],
    },
    Program {
        names: &[
            "lvrename",
            "lvconvert",
            "lvresize",
            "lvextend",
            "lvreduce",
            "vgrename",
            "vgreduce",
            "vgsplit",
            "vgmerge",
            "pvmove",
            "pvresize",
            "resize2fs",
            "xfs_growfs",
            "e2label",
            "tune2fs",
            "fatlabel",
            "growpart",
            "gdisk",
            "fdisk",
            "cfdisk",
            "rkdeveloptool",
        ],
        value_opts: &[
            "-L",
            "--size",
            "-l",
            "--extents",
            "--type",
            "-m",
            "--mirrors",
            "-n",
            "--name",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::NoneOf(&["-l", "--list", "-s", "--help", "--version", "-t", "--test"]),
                &When::Both(
                    // `parted DISK print`: a listing (a write asked with it is the disk
                    // rules' to judge).
                    &When::Not(&When::Arg(Val::Is(&["print"]))),
                    &When::Either(
                        &When::Arg(Val::Prefix(&["/dev/"])),
                        &When::First(Val::Is(&["db", "wl", "ef", "ul", "rd"])),
                    ),
                ),
            ),
            does: Does::ChangeDisk,
        }],
    },
    // Programs whose effects other rules own: visudo's edits are the editor rule's (its `-c`
    // only checks), sgdisk's and sfdisk's writes the disk rules' (their listing passes).
    Program {
        names: &["visudo", "sgdisk", "sfdisk"],
        value_opts: &[],
        clauses: &[],
    },
    // parted's writes are the disk rules' (`mklabel`, `rm`, ..., blocked); opened on a disk
    // with no verb it is an interactive editor (warned); `print` and `-l` only list.
    Program {
        names: &["parted"],
        value_opts: &["-a", "--align"],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::Arg(Val::Prefix(&["/dev/"])),
                &When::Both(
                    &When::NoneOf(&["-l", "--list", "-s", "--script", "--help", "--version"]),
                    &When::Not(&When::Arg(Val::Is(&["print", "p", "help", "version", "unit"]))),
                ),
            ),
            does: Does::ChangeDisk,
        }],
    },
    Program {
        names: &["vault"],
        value_opts: &["-address", "-namespace", "-format", "-field", "-mount", "-version"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Either(
                    &When::First(Val::Is(&["read"])),
                    &When::Both(&When::First(Val::Is(&["kv"])), &When::Arg(Val::Is(&["get"]))),
                ),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &[],
                when: When::First(Val::Is(DESTROY_VERBS)),
                does: Does::DestroyRemote,
            },
            Clause {
                sub: &["operator"],
                when: When::First(Val::Is(&["seal", "raft", "step-down"])),
                does: Does::DestroyRemote,
            },
        ],
    },
    // etcd: `del "" --prefix` (or `--from-key ""`, or the prefix `/`) deletes every key the
    // cluster holds, Kubernetes' whole state among them; a narrower prefix removes a subtree.
    Program {
        names: &["etcdctl"],
        value_opts: &[
            "--endpoints",
            "--cacert",
            "--cert",
            "--key",
            "--user",
            "--password",
            "--dial-timeout",
            "--command-timeout",
            "-w",
            "--write-out",
        ],
        clauses: &[
            Clause {
                sub: &["del"],
                when: When::Both(
                    &When::Any(&["--prefix", "--from-key"]),
                    &When::Arg(Val::Is(&["", "/"])),
                ),
                does: Does::DestroyRemote,
            },
            Clause {
                sub: &["del"],
                when: When::Always,
                does: Does::RemoveRemote,
            },
        ],
    },
    // Supabase's CLI also runs the local development stack (`supabase start|stop`): only its
    // deletions reach the account.
    Program {
        names: &["supabase"],
        value_opts: &["--project-ref", "--workdir", "-o", "--output"],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Is(DESTROY_VERBS)),
            does: Does::DestroyRemote,
        }],
    },
    // GitHub's and GitLab's CLIs: gists and snippets share files; tokens printed.
    Program {
        names: &["gh"],
        value_opts: &[
            "-R",
            "--repo",
            "-d",
            "--desc",
            "-f",
            "--filename",
            "--hostname",
            "-h",
            "--visibility",
        ],
        clauses: &[
            Clause {
                sub: &["gist", "create"],
                when: When::Always,
                does: Does::ShareFiles,
            },
            Clause {
                sub: &["auth", "token"],
                when: When::Always,
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["repo", "edit"],
                when: When::Value(&["--visibility"], Val::Is(&["public"])),
                does: Does::Publish,
            },
        ],
    },
    Program {
        names: &["glab"],
        value_opts: &[
            "-R",
            "--repo",
            "-d",
            "--description",
            "-f",
            "--filename",
            "-t",
            "--title",
        ],
        clauses: &[Clause {
            sub: &["snippet", "create"],
            when: When::Always,
            does: Does::ShareFiles,
        }],
    },
    // Object-storage clients that push local files to a bucket.
    Program {
        names: &["s3cmd"],
        value_opts: &["-c", "--config", "--region", "--acl-grant", "--exclude", "--include"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["put", "sync", "modify", "mv", "cp"])),
                does: Does::CopyToRemote,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::First(Val::Is(&["rb", "purge"])),
                    &When::Both(
                        &When::First(Val::Is(&["del", "rm"])),
                        &When::Any(&["-r", "--recursive"]),
                    ),
                ),
                does: Does::DestroyRemote,
            },
        ],
    },
    // Tools that print a credential they hold: the transcript and logs keep it.
    Program {
        names: &["heroku"],
        value_opts: &["-a", "--app", "-r", "--remote"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["auth:token", "config"])),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["apps:destroy", "pg:reset", "addons:destroy", "apps:delete"])),
                does: Does::DestroyRemote,
            },
            Clause {
                sub: &[],
                when: When::First(Val::Suffix(&[":unset", ":remove", ":detach", ":disable", ":stop"])),
                does: Does::RemoveRemote,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Both(&When::First(Val::Suffix(&[":scale"])), &When::Arg(Val::Zero)),
                    &When::First(Val::Is(&["maintenance:on"])),
                ),
                does: Does::StopRemote,
            },
        ],
    },
    Program {
        names: &["git-credential", "ansible-vault"],
        value_opts: &["--vault-password-file", "--vault-id", "--output"],
        clauses: &[Clause {
            sub: &[],
            when: When::First(Val::Is(&["fill", "decrypt", "view"])),
            does: Does::ReadSecret,
        }],
    },
    Program {
        names: &["pass", "gopass"],
        value_opts: &["-c", "--clip"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["show", "cat"])),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["otp"],
                when: When::Not(&When::First(Val::Is(&["insert", "append", "validate"]))),
                does: Does::ReadSecret,
            },
            // `pass NAME`: the entry is shown.
            Clause {
                sub: &[],
                when: When::Both(
                    &When::First(Val::Any),
                    &When::Not(&When::First(Val::Is(PASS_SUBCOMMANDS))),
                ),
                does: Does::ReadSecret,
            },
        ],
    },
    Program {
        names: &["op"],
        value_opts: &[
            "--account",
            "--vault",
            "--fields",
            "--format",
            "--out-file",
            "-o",
            "--in-file",
            "-i",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["read", "inject"])),
                does: Does::ReadSecret,
            },
            Clause {
                sub: &[],
                when: When::Both(
                    &When::First(Val::Is(&["item", "document", "ssh"])),
                    &When::Arg(Val::Is(&["get"])),
                ),
                does: Does::ReadSecret,
            },
        ],
    },
    Program {
        names: &["bw", "lpass", "keepassxc-cli", "rbw"],
        value_opts: &[
            "--session",
            "--format",
            "--output",
            "--field",
            "-f",
            "-a",
            "--attributes",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::First(Val::Is(&["get", "show", "export"])),
                // `rbw get -f username E`: a field that is no secret.
                &When::Not(&When::Value(
                    &["-f", "--field"],
                    Val::Is(&["username", "user", "notes", "uri", "uris", "url"]),
                )),
            ),
            does: Does::ReadSecret,
        }],
    },
    Program {
        names: &["secret-tool"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::First(Val::Is(&["lookup", "search"])),
            does: Does::ReadSecret,
        }],
    },
    Program {
        names: &["sops"],
        value_opts: &["--extract", "--output", "--input-type", "--output-type", "--config"],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Any(&["-d", "--decrypt"]),
                &When::First(Val::Is(&["decrypt", "exec-env", "exec-file"])),
            ),
            does: Does::ReadSecret,
        }],
    },
    Program {
        names: &["doppler", "infisical", "chamber", "k8sec", "teller", "berglas"],
        value_opts: &[
            "--project",
            "-p",
            "--config",
            "-c",
            "--format",
            "--env",
            "--filename",
            "-n",
            "--namespace",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Both(
                    &When::First(Val::Is(&["secrets"])),
                    &When::Not(&When::Arg(Val::Is(&["set", "delete", "upload", "rm", "names"]))),
                ),
                &When::First(Val::Is(&[
                    "export", "read", "dump", "env", "access", "show", "get", "list",
                ])),
            ),
            does: Does::ReadSecret,
        }],
    },
    Program {
        names: &["dotnet"],
        value_opts: &[
            "-c",
            "--configuration",
            "-f",
            "--framework",
            "-p",
            "--project",
            "--context",
        ],
        clauses: &[Clause {
            sub: &["ef", "database", "drop"],
            when: When::Always,
            does: Does::DestroyRemote,
        }],
    },
    Program {
        names: &["git"],
        value_opts: &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--exec-path",
            "--config-env",
            "-m",
            "-s",
            "--source",
            "--expire",
            "--expire-unreachable",
        ],
        clauses: &[
            // `git restore PATH` without --staged writes the work tree; with --source from
            // another commit too.
            Clause {
                sub: &["restore"],
                when: When::Either(&When::Any(&["--worktree", "-W"]), &When::NoneOf(&["--staged", "-S"])),
                does: Does::DiscardWorktree,
            },
            // git-extras: `git clear` is `clean -dfx` and `reset --hard` at once; `force-clone`
            // replaces an existing directory with a fresh clone.
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["clear", "clear-soft", "force-clone"])),
                does: Does::DiscardEverything,
            },
            // `git credential fill`, `git credential-store get`: the stored password or token
            // for a host, printed.
            Clause {
                sub: &["credential", "fill"],
                when: When::Always,
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["credential-store", "get"],
                when: When::Always,
                does: Does::ReadSecret,
            },
            Clause {
                sub: &["credential-cache", "get"],
                when: When::Always,
                does: Does::ReadSecret,
            },
            // `git daemon`: the repositories served on every interface (with `receive-pack`,
            // writable by anyone).
            Clause {
                sub: &["daemon"],
                when: When::NoneOf(&["--listen"]),
                does: Does::ExposedService,
            },
            Clause {
                sub: &["daemon"],
                when: When::Value(&["--enable"], Val::Is(&["receive-pack"])),
                does: Does::AuthOff,
            },
            // `git checkout -f BRANCH`, `git switch --discard-changes`: local changes are
            // thrown away to switch.
            Clause {
                sub: &["checkout"],
                when: When::Any(&["-f", "--force"]),
                does: Does::DiscardEverything,
            },
            Clause {
                sub: &["switch"],
                when: When::Any(&["-f", "--force", "--discard-changes"]),
                does: Does::DiscardEverything,
            },
            // `git checkout [REF] -- PATH`: the paths after `--` are put back.
            Clause {
                sub: &["checkout"],
                when: When::DashDash,
                does: Does::DiscardWorktree,
            },
            Clause {
                sub: &["stash", "clear"],
                when: When::Always,
                does: Does::DropStash,
            },
            Clause {
                sub: &["stash", "drop"],
                when: When::Always,
                does: Does::DropStash,
            },
            Clause {
                sub: &["reflog", "expire"],
                when: When::Always,
                does: Does::DestroyReflog,
            },
            Clause {
                sub: &["reflog", "delete"],
                when: When::Always,
                does: Does::DestroyReflog,
            },
            Clause {
                sub: &["gc"],
                when: When::Value(&["--prune"], Val::Is(&["now", "all"])),
                does: Does::PruneObjects,
            },
            Clause {
                sub: &["prune"],
                when: When::Always,
                does: Does::PruneObjects,
            },
            // git-extras: deleting tags, branches and submodules, and rewriting files out of
            // the history.
            Clause {
                sub: &[],
                when: When::Arg(Val::Is(&[
                    "delete-tag",
                    "delete-branch",
                    "delete-submodule",
                    "delete-merged-branches",
                    "obliterate",
                ])),
                does: Does::DeleteRefs,
            },
            Clause {
                sub: &["update-ref"],
                when: When::Any(&["-d", "--delete"]),
                does: Does::DeleteRefs,
            },
            Clause {
                sub: &["symbolic-ref"],
                when: When::Any(&["-d", "--delete"]),
                does: Does::DeleteRefs,
            },
            Clause {
                sub: &["branch"],
                when: When::Either(
                    &When::Any(&["-D"]),
                    &When::Both(&When::Any(&["-d", "--delete"]), &When::Any(&["-f", "--force"])),
                ),
                does: Does::DeleteRefs,
            },
        ],
    },
    Program {
        names: &["docker", "podman", "nerdctl"],
        value_opts: DOCKER_VALUE_OPTS,
        clauses: container_clauses!(&["run"], &["create"], &["container", "run"], &["container", "create"]),
    },
    // containerd's own client: `ctr [-n NS] run [OPTS] IMAGE ID [CMD]`.
    Program {
        names: &["ctr"],
        value_opts: &[
            "-n",
            "--namespace",
            "-a",
            "--address",
            "--mount",
            "--env",
            "--label",
            "--runtime",
            "--snapshotter",
            "--cwd",
            "--user",
            "-u",
        ],
        clauses: container_clauses!(&["run"], &["container", "create"], &["containers", "create"], &["c", "create"]),
    },
    Program {
        names: &["nsenter"],
        value_opts: &["-t", "--target", "-S", "--setuid", "-G", "--setgid"],
        clauses: &[Clause {
            sub: &[],
            when: When::Value(&["-t", "--target"], Val::Is(&["1"])),
            does: Does::Escape("enters the namespaces of the host's init process"),
        }],
    },
    Program {
        names: &["unshare"],
        value_opts: crate::guard::carriers::UNSHARE_VALUE_OPTIONS,
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-r", "--map-root-user", "--map-current-user", "--map-auto"]),
            does: Does::Escape("maps the agent to root in a new user namespace"),
        }],
    },
    Program {
        names: &["chroot"],
        value_opts: &["--userspec", "--groups"],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Prefix(&["/"])),
            does: Does::Escape("changes root into another file system tree"),
        }],
    },
    Program {
        names: &["mount"],
        value_opts: &["-t", "-o", "--types", "--options", "-L", "-U"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Arg(Val::Prefix(&[
                    "/dev/sd",
                    "/dev/nvme",
                    "/dev/vd",
                    "/dev/xvd",
                    "/dev/hd",
                    "/dev/mapper/",
                    "/dev/dm-",
                    "/dev/md",
                    "/dev/mmcblk",
                    "/dev/root",
                    "/dev/loop",
                ])),
                does: Does::Escape("mounts a host disk"),
            },
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Any(&["--bind", "--rbind", "-B", "-R"]),
                    &When::Arg(Val::Is(&["/", "/etc", "/root", "/home", "/proc", "/sys"])),
                ),
                does: Does::Escape("bind-mounts the host's root or a system directory"),
            },
            Clause {
                sub: &[],
                when: When::Value(&["-o", "--options"], Val::Contains(&["remount,rw", "rw,remount"])),
                does: Does::Kernel("remounts a file system read-write"),
            },
            // `mount -B /proc/$empty /proc/$pid`: a process hidden from every listing.
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Any(&["--bind", "--rbind", "-B", "-R"]),
                    &When::Arg(Val::Prefix(&["/proc/"])),
                ),
                does: Does::SecurityOff("mounts over a process's /proc entry, hiding it from every listing"),
            },
        ],
    },
    Program {
        names: &["sysctl"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Any(&["-w", "--write", "-p", "--load", "--system"]),
                &When::Arg(Val::Contains(&["="])),
            ),
            does: Does::Kernel("changes a kernel tunable"),
        }],
    },
    Program {
        names: &["insmod", "rmmod", "modprobe"],
        value_opts: &["-C", "--config", "-d", "--dirname", "-S", "--set-version"],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["-n", "--dry-run", "--show-depends", "-c", "--showconfig", "-D"]),
            does: Does::Kernel("loads or unloads a kernel module"),
        }],
    },
    Program {
        names: &[
            "iptables",
            "ip6tables",
            "iptables-legacy",
            "iptables-nft",
            "ip6tables-legacy",
            "ip6tables-nft",
            "ebtables",
            "arptables",
        ],
        value_opts: &[
            "-P",
            "--policy",
            "-t",
            "--table",
            "-A",
            "--append",
            "-I",
            "--insert",
            "-N",
            "--new-chain",
            "-j",
            "--jump",
            "-p",
            "--protocol",
            "-s",
            "--source",
            "-d",
            "--destination",
            "-i",
            "-o",
            "--dport",
            "--sport",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Any(&["-F", "--flush", "-X", "--delete-chain"]),
                does: Does::SecurityOff("flushes the firewall rules"),
            },
            Clause {
                sub: &[],
                when: When::Both(&When::Any(&["-P", "--policy"]), &When::Arg(Val::Is(&["accept"]))),
                does: Does::SecurityOff("sets the firewall to accept everything"),
            },
            // `iptables -D INPUT -p tcp --dport 22 -j DROP`: what the rule kept out gets in.
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Any(&["-D", "--delete"]),
                    &When::Value(&["-j", "--jump"], Val::Is(&["drop", "reject"])),
                ),
                does: Does::SecurityOff("deletes a firewall rule that drops or rejects traffic"),
            },
            Clause {
                sub: &[],
                when: When::Any(&[
                    "-A",
                    "--append",
                    "-I",
                    "--insert",
                    "-D",
                    "--delete",
                    "-R",
                    "--replace",
                    "-N",
                    "--new-chain",
                    "-P",
                    "--policy",
                    "-Z",
                ]),
                does: Does::NetworkConfig,
            },
        ],
    },
    // BSD's packet filter: `-d` turns it off, `-F` flushes what it holds, `-f` loads rules.
    Program {
        names: &["pfctl"],
        value_opts: &[
            "-a", "-f", "-F", "-s", "-t", "-T", "-k", "-K", "-x", "-D", "-i", "-o", "-p",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Any(&["-d"]),
                does: Does::SecurityOff("turns the packet filter off"),
            },
            Clause {
                sub: &[],
                when: When::Value(&["-F"], Val::Is(&["all", "rules", "nat", "ethernet"])),
                does: Does::SecurityOff("flushes the packet filter's rules"),
            },
            Clause {
                sub: &[],
                when: When::Any(&["-f", "-e"]),
                does: Does::NetworkConfig,
            },
        ],
    },
    // Microsoft Defender for Endpoint: `mdatp config real-time-protection --value disabled`.
    Program {
        names: &["mdatp"],
        value_opts: &["--value", "--name", "--path", "--extension", "--scan-type"],
        clauses: &[Clause {
            sub: &["config"],
            when: When::Value(&["--value"], Val::Is(&["disabled", "off", "false"])),
            does: Does::SecurityOff("turns a protection of the endpoint agent off"),
        }],
    },
    Program {
        names: &["nft"],
        value_opts: &["-f", "--file", "-I", "--includepath"],
        clauses: &[
            Clause {
                sub: &["flush", "ruleset"],
                when: When::Always,
                does: Does::SecurityOff("flushes the firewall rules"),
            },
            Clause {
                sub: &["delete", "table"],
                when: When::Always,
                does: Does::SecurityOff("deletes a firewall table"),
            },
            Clause {
                sub: &["flush", "table"],
                when: When::Always,
                does: Does::SecurityOff("flushes a firewall table"),
            },
            Clause {
                sub: &[],
                when: When::Arg(Val::Is(&["add", "insert", "replace", "delete", "create", "flush"])),
                does: Does::NetworkConfig,
            },
        ],
    },
    Program {
        names: &["ufw"],
        value_opts: &[],
        clauses: &[
            Clause {
                sub: &["disable"],
                when: When::Always,
                does: Does::SecurityOff("turns the firewall off"),
            },
            Clause {
                sub: &["reset"],
                when: When::Always,
                does: Does::SecurityOff("resets the firewall"),
            },
            Clause {
                sub: &["default", "allow"],
                when: When::Always,
                does: Does::SecurityOff("lets every connection through the firewall"),
            },
            Clause {
                sub: &["allow"],
                when: When::Always,
                does: Does::NetworkConfig,
            },
            Clause {
                sub: &["delete"],
                when: When::Always,
                does: Does::NetworkConfig,
            },
            Clause {
                sub: &[],
                when: When::Arg(Val::Is(&["deny", "reject", "limit", "insert", "route", "prepend"])),
                does: Does::NetworkConfig,
            },
        ],
    },
    Program {
        names: &["firewall-cmd"],
        value_opts: &[],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Any(&[
                    "--add-port",
                    "--add-service",
                    "--remove-service",
                    "--remove-port",
                    "--panic-on",
                    "--add-rich-rule",
                    "--add-forward-port",
                    "--add-masquerade",
                    "--reload",
                    "--complete-reload",
                    "--runtime-to-permanent",
                ]),
                does: Does::NetworkConfig,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Value(&["--set-default-zone"], Val::Is(&["trusted"])),
                    &When::Value(&["--zone"], Val::Is(&["trusted"])),
                ),
                does: Does::SecurityOff("trusts every connection"),
            },
        ],
    },
    Program {
        names: &["systemctl"],
        value_opts: &[
            "-H",
            "--host",
            "-M",
            "--machine",
            "-p",
            "--property",
            "-t",
            "--type",
            "-s",
            "--signal",
        ],
        clauses: &[
            Clause {
                sub: &["stop"],
                when: When::Arg(Val::SecurityAgent),
                does: Does::SecurityOff("stops a security service"),
            },
            Clause {
                sub: &["disable"],
                when: When::Arg(Val::SecurityAgent),
                does: Does::SecurityOff("disables a security service"),
            },
            Clause {
                sub: &["mask"],
                when: When::Arg(Val::SecurityAgent),
                does: Does::SecurityOff("masks a security service"),
            },
            Clause {
                sub: &["kill"],
                when: When::Arg(Val::SecurityAgent),
                does: Does::SecurityOff("kills a security service"),
            },
            Clause {
                sub: &["enable"],
                when: When::NoneOf(&["--user"]),
                does: Does::EnableService,
            },
            // `systemctl link /tmp/x.service`, `systemctl enable /path/x.service`: a unit file
            // registered where it lies.
            Clause {
                sub: &["link"],
                when: When::Always,
                does: Does::RegistersFile,
            },
            Clause {
                sub: &["enable"],
                when: When::Arg(Val::Contains(&["/"])),
                does: Does::RegistersFile,
            },
            Clause {
                sub: &["soft-reboot"],
                when: When::Always,
                does: Does::Shutdown,
            },
            Clause {
                sub: &[],
                when: When::First(Val::Is(&[
                    "hybrid-sleep",
                    "suspend-then-hibernate",
                    "sleep",
                    "suspend",
                    "hibernate",
                ])),
                does: Does::MachinePower,
            },
        ],
    },
    // SysV's `service`, OpenRC's `rc-service`, Debian's `invoke-rc.d`, runit's `sv`: a service
    // named, then what to do with it (`sv down x` stops it too).
    Program {
        names: &["service", "rc-service", "invoke-rc.d", "sv"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::Arg(Val::SecurityAgent),
                // `service apparmor teardown`: every profile unloaded; `service iptables flush`,
                // `clear`, `panic`: the rules dropped; FreeBSD's `onestop`, `faststop`, `forcestop`.
                &When::Arg(Val::Is(&[
                    "stop",
                    "disable",
                    "kill",
                    "down",
                    "force-stop",
                    "teardown",
                    "flush",
                    "clear",
                    "panic",
                    "onestop",
                    "faststop",
                    "forcestop",
                ])),
            ),
            does: Does::SecurityOff("stops a security service"),
        }],
    },
    Program {
        names: &["update-rc.d", "chkconfig", "rc-update", "sysrc"],
        value_opts: &[],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Arg(Val::SecurityAgent),
                    &When::Either(
                        &When::Arg(Val::Is(&["disable", "remove", "off", "del", "delete"])),
                        &When::Arg(Val::Contains(&["_enable=no", "_enable=\"no\""])),
                    ),
                ),
                does: Does::SecurityOff("disables a security service"),
            },
            // `update-rc.d nginx enable|defaults`, `chkconfig nginx on`, `rc-update add x`,
            // `sysrc x_enable=YES`: started at every boot.
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Arg(Val::Is(&["enable", "defaults", "on", "add"])),
                    &When::Arg(Val::Contains(&["_enable=yes", "_enable=\"yes\""])),
                ),
                does: Does::EnableService,
            },
        ],
    },
    Program {
        names: &["setenforce"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Is(&["0", "permissive"])),
            does: Does::SecurityOff("turns SELinux enforcement off"),
        }],
    },
    Program {
        names: &["aa-teardown", "aa-disable", "aa-complain"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Always,
            does: Does::SecurityOff("turns AppArmor profiles off"),
        }],
    },
    Program {
        names: &[
            "nwipe",
            "blkdiscard",
            "sg_format",
            "shred",
            "wipe",
            "scrub",
            "dcfldd",
            "f3fix",
            "f3probe",
        ],
        value_opts: &["-m", "--method", "-r", "--rounds", "-o", "--offset", "-l", "--length"],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Prefix(&["/dev/"])),
            does: Does::WipeDevice,
        }],
    },
    Program {
        names: &["pvcreate", "vgcreate", "mkswap", "ventoy", "zpool", "mdadm", "vgextend"],
        value_opts: &[
            "-L",
            "--label",
            "-U",
            "--uuid",
            "-o",
            "-O",
            "-l",
            "--level",
            "-n",
            "--raid-devices",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::Arg(Val::Prefix(&["/dev/"])),
                &When::Either(
                    &When::Any(&["-i", "-I", "-u", "--create", "-C", "--zero-superblock", "-f", "--force"]),
                    &When::NoneOf(&[
                        "--detail",
                        "-D",
                        "--examine",
                        "-E",
                        "--query",
                        "-Q",
                        "--scan",
                        "-l",
                        "-s",
                        "--status",
                    ]),
                ),
            ),
            does: Does::WipeDevice,
        }],
    },
    Program {
        // Hardware security keys and smart cards: a reset erases the keys they hold.
        names: &["ykman", "gpg-card", "pkcs15-init", "nitropy", "solo", "solo2"],
        value_opts: &["-d", "--device", "-r", "--reader"],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Arg(Val::Is(&["reset", "factory-reset", "erase", "--erase"])),
                &When::Any(&["--erase", "-E"]),
            ),
            does: Does::WipeDevice,
        }],
    },
    Program {
        names: &["userdel", "deluser"],
        value_opts: &["-R", "--root", "-P", "--prefix", "--backup-to"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-r", "--remove", "--remove-home", "--remove-all-files"]),
            does: Does::DeleteUserFiles,
        }],
    },
    // The reboot asked of the login manager over the system's message bus (`busctl call
    // org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager Reboot b
    // true`, `dbus-send .. org.freedesktop.login1.Manager.PowerOff boolean:true`, `gdbus call ..
    // --method org.freedesktop.login1.Manager.Reboot true`), or of a media centre's host
    // (`kodi-send -a Reboot`).
    Program {
        names: &[
            "busctl",
            "dbus-send",
            "gdbus",
            "kodi-send",
            "qdbus",
            "qdbus6",
            "qdbus-qt5",
            "qdbus-qt6",
        ],
        value_opts: &[
            "--dest",
            "-d",
            "--object-path",
            "-o",
            "--method",
            "-m",
            "--type",
            "--reply-timeout",
            "--timeout",
            "-a",
            "--action",
            "--host",
            "--port",
            "-M",
            "--machine",
            "-H",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Arg(Val::Is(POWER_METHODS)),
                &When::Either(
                    &When::Arg(Val::Suffix(POWER_METHOD_SUFFIXES)),
                    &When::Either(
                        &When::Value(&["--method", "-m", "-a", "--action"], Val::Is(POWER_METHODS)),
                        &When::Value(
                            &["--method", "-m", "-a", "--action"],
                            Val::Suffix(POWER_METHOD_SUFFIXES),
                        ),
                    ),
                ),
            ),
            does: Does::Shutdown,
        }],
    },
    // `rpm-ostree upgrade --reboot`, `updatectl --reboot update`: the update finishes with a
    // reboot of this machine.
    Program {
        names: &["rpm-ostree", "updatectl", "bootc"],
        value_opts: &["--os", "--sysroot", "--peer", "--stateroot"],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Any(&["--reboot", "--apply"]),
                &When::Both(
                    &When::Arg(Val::Is(&[
                        "upgrade",
                        "rollback",
                        "install",
                        "rebase",
                        "deploy",
                        "uninstall",
                        "switch",
                    ])),
                    &When::Any(&["-r"]),
                ),
            ),
            does: Does::Shutdown,
        }],
    },
    // `ipmitool power cycle`: with no `-H HOST`, the board controller of this machine, which
    // cuts its power; with one, another machine's.
    Program {
        names: &["ipmitool"],
        value_opts: IPMITOOL_VALUE_OPTIONS,
        clauses: &[
            Clause {
                sub: &[],
                when: When::Both(
                    &When::NoneOf(&["-H"]),
                    &When::Both(
                        &When::Arg(Val::Is(&["power"])),
                        &When::Arg(Val::Is(&["off", "cycle", "reset", "soft", "diag"])),
                    ),
                ),
                does: Does::Shutdown,
            },
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Any(&["-H"]),
                    &When::Both(
                        &When::Arg(Val::Is(&["power"])),
                        &When::Arg(Val::Is(&["off", "cycle", "reset", "soft", "diag"])),
                    ),
                ),
                does: Does::MachinePower,
            },
        ],
    },
    // `steamos-factory-reset`: the device's own data and settings erased, as new.
    Program {
        names: &["steamos-factory-reset"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["--help", "-h"]),
            does: Does::WipeDevice,
        }],
    },
    Program {
        names: &["kexec"],
        value_opts: &["-l", "--load", "--initrd", "--append", "--command-line"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-e", "--exec", "-f", "--force"]),
            does: Does::Shutdown,
        }],
    },
    Program {
        names: &[
            "i3exit",
            "loginctl",
            "gnome-session-quit",
            "xfce4-session-logout",
            "lxqt-leave",
        ],
        value_opts: &[],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Arg(Val::Is(&[
                        "shutdown",
                        "reboot",
                        "poweroff",
                        "halt",
                        "terminate-user",
                        "kill-user",
                        "terminate-session",
                        "kill-session",
                        // `qdbus org.kde.Shutdown /Shutdown logoutAndReboot`.
                        "logoutandreboot",
                        "logoutandshutdown",
                    ])),
                    &When::Any(&["--power-off", "--reboot"]),
                ),
                does: Does::Shutdown,
            },
            Clause {
                // `loginctl enable-linger USER`: the user's services start at boot and outlive
                // every login.
                sub: &["enable-linger"],
                when: When::Always,
                does: Does::EnableService,
            },
        ],
    },
    Program {
        names: &["systemd-firstboot"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["--delete-root-password", "--root-password-hashed", "--root-password"]),
            does: Does::Passwordless,
        }],
    },
    Program {
        names: &["rabbitmqctl"],
        value_opts: &["-n", "--node", "-p", "--vhost"],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Is(&[
                "reset",
                "force_reset",
                "delete_vhost",
                "delete_user",
                "purge_queue",
            ])),
            does: Does::DestroyRemote,
        }],
    },
    Program {
        names: &["badblocks"],
        value_opts: &["-b", "-c", "-e", "-d", "-i", "-o", "-p", "-t"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-w"]),
            does: Does::WipeDevice,
        }],
    },
    Program {
        names: &["wipefs"],
        value_opts: &["-o", "--offset", "-t", "--types", "-b", "--backup"],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::Any(&["-a", "--all", "-o", "--offset"]),
                &When::NoneOf(&["-n", "--no-act"]),
            ),
            does: Does::WipeDevice,
        }],
    },
    Program {
        names: &["nvme"],
        value_opts: &["-n", "--namespace-id", "-s", "--ses", "-r", "--reset"],
        clauses: &[
            Clause {
                sub: &["format"],
                when: When::Always,
                does: Does::WipeDevice,
            },
            Clause {
                sub: &["sanitize"],
                when: When::Always,
                does: Does::WipeDevice,
            },
        ],
    },
    Program {
        names: &["hdparm"],
        value_opts: &["--user-master", "--security-set-pass"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&[
                "--security-erase",
                "--security-erase-enhanced",
                "--trim-sector-ranges",
                "--write-sector",
            ]),
            does: Does::WipeDevice,
        }],
    },
    Program {
        names: &["ip"],
        value_opts: &["-n", "-netns", "-f", "-family"],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Arg(Val::Is(&[
                    "del", "delete", "d", "flush", "f", "down", "replace", "change",
                ])),
                &When::Both(
                    &When::Arg(Val::Is(&["set"])),
                    &When::Arg(Val::Is(&["down", "nomaster"])),
                ),
            ),
            does: Does::NetworkConfig,
        }],
    },
    Program {
        names: &[
            "ifconfig",
            "ifdown",
            "nmcli",
            "networkctl",
            "route",
            "brctl",
            "tc",
            "ethtool",
            "iwconfig",
            "wg-quick",
            "resolvectl",
        ],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Arg(Val::Is(&[
                    "down",
                    "del",
                    "delete",
                    "off",
                    "flush",
                    "disconnect",
                    "revert",
                    "reset",
                    "delif",
                    "delbr",
                ])),
                &When::Any(&["-s", "--set", "-K", "--offload"]),
            ),
            does: Does::NetworkConfig,
        }],
    },
    Program {
        names: &["aa-remove-unknown"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["-n"]),
            does: Does::SecurityOff("unloads AppArmor profiles"),
        }],
    },
    Program {
        names: &["code", "code-insiders", "devtunnel", "cloudflared", "vscode-server"],
        value_opts: &["--name", "--url", "--accept-server-license-terms"],
        clauses: &[Clause {
            sub: &[],
            // `cloudflared tunnel info NAME`, `code tunnel status`: inspecting opens nothing.
            when: When::Both(
                &When::Arg(Val::Is(&["tunnel", "host"])),
                &When::Not(&When::Arg(Val::Is(crate::guard::rules::network::TUNNEL_INSPECT))),
            ),
            does: Does::Tunnel,
        }],
    },
    // busybox's `httpd` applet, once busybox is unwrapped: `-h DIR` serves a directory.
    Program {
        names: &["httpd"],
        value_opts: &["-p", "-h", "-c", "-u", "-r"],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::Any(&["-h"]),
                &When::Either(&When::NoneOf(&["-p"]), &When::Value(&["-p"], Val::NotLoopback)),
            ),
            does: Does::ExposedService,
        }],
    },
    Program {
        names: &["busybox"],
        value_opts: &["-p", "-h", "-c", "-u", "-r"],
        clauses: &[Clause {
            sub: &["httpd"],
            when: When::Either(&When::NoneOf(&["-p"]), &When::Value(&["-p"], Val::NotLoopback)),
            does: Does::ExposedService,
        }],
    },
    Program {
        names: &["gpg", "gpg2"],
        value_opts: &["-o", "--output", "-u", "--local-user", "-r", "--recipient", "--homedir"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["--export-secret-keys", "--export-secret-key", "--export-secret-subkeys"]),
            does: Does::ExportSecrets,
        }],
    },
    Program {
        names: &[
            "ffsend",
            "croc",
            "wormhole",
            "magic-wormhole",
            "gist",
            "gh-gist",
            "pastebinit",
            "transfersh",
            "onionshare-cli",
            "0x0",
        ],
        value_opts: &[
            "-c",
            "--code",
            "-d",
            "--description",
            "--downloads",
            "--expiry",
            "-i",
            "-b",
        ],
        clauses: &[Clause {
            sub: &[],
            // What is received comes here: only sending shares.
            when: When::Not(&When::First(Val::Is(&["receive", "recv", "rx", "get", "download"]))),
            does: Does::ShareFiles,
        }],
    },
    Program {
        names: &[
            "qm",
            "pct",
            "virsh",
            "VBoxManage",
            "vboxmanage",
            "vmrun",
            "xl",
            "incus",
            "lxc",
            "multipass",
            "openstack",
            "prlctl",
            "utmctl",
        ],
        value_opts: &["--name", "-n", "--keepActive", "--timeout"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Arg(Val::Is(&[
                    "stop", "shutdown", "reboot", "reb", "reset", "poweroff", "destroy", "suspend", "kill", "halt",
                    "des", "del",
                ])),
                does: Does::MachinePower,
            },
            // `lxc init IMG c -c security.privileged=true`, `lxc config device add c r disk
            // source=/ path=/mnt/root`: the container runs as the host's root, or holds its
            // root file system.
            // (Not after `--`: `lxc exec c -- echo source=/` hands the words to a command.)
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Not(&When::DashDash),
                    &When::Either(
                        &When::Arg(Val::Is(&[
                            "security.privileged=true",
                            "security.privileged=1",
                            "security.privileged=yes",
                            "source=/",
                        ])),
                        &When::Either(
                            // `lxc config set c security.privileged true`
                            &When::Both(
                                &When::Arg(Val::Is(&["security.privileged"])),
                                &When::Arg(Val::Is(&["true", "1", "yes"])),
                            ),
                            &When::Arg(Val::Contains(&["lxc.apparmor.profile=unconfined"])),
                        ),
                    ),
                ),
                does: Does::Escape("gives the container the host's root file system or runs it as the host's root"),
            },
        ],
    },
    Program {
        names: &["rtcwake"],
        value_opts: &[
            "-m",
            "--mode",
            "-s",
            "--seconds",
            "-t",
            "--time",
            "--date",
            "-d",
            "--device",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["-n", "--dry-run", "-l", "--list-modes"]),
            does: Does::MachinePower,
        }],
    },
    Program {
        names: &[
            "grubby",
            "bootctl",
            "kernel-install",
            "update-grub",
            "update-grub2",
            "grub-install",
            "grub2-install",
            "grub-mkconfig",
            "grub2-mkconfig",
            "grub-reboot",
            "grub-set-default",
            "efibootmgr",
            "limine-entry-tool",
            "update-initramfs",
            "dracut",
            "mkinitcpio",
            "etckeeper",
        ],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Any(&[
                    "--update-kernel",
                    "--remove-kernel",
                    "--add-kernel",
                    "--set-default",
                    "-c",
                    "--create",
                    "-B",
                    "--delete-bootnum",
                    "-o",
                    "--bootorder",
                    "--remove-os",
                    "-u",
                    "-k",
                    "-p",
                ]),
                &When::Arg(Val::Is(&[
                    "remove",
                    "add",
                    "install",
                    "uninit",
                    "set-default",
                    "unlink",
                    "update",
                    "random-seed",
                ])),
            ),
            does: Does::BootConfig,
        }],
    },
    Program {
        names: &["semanage"],
        value_opts: &[
            "-t", "--type", "-s", "--seuser", "-r", "--range", "-R", "--roles", "-e", "--equal", "-p", "--proto", "-f",
            "--ftype",
        ],
        clauses: &[
            Clause {
                sub: &["permissive"],
                when: When::Any(&["-a", "--add"]),
                does: Does::SecurityOff("makes an SELinux domain permissive"),
            },
            Clause {
                sub: &[],
                when: When::Any(&["-a", "--add", "-d", "--delete", "-m", "--modify", "-D", "--deleteall"]),
                does: Does::SecurityPolicy,
            },
        ],
    },
    Program {
        names: &["setsebool", "setfattr", "chcon"],
        value_opts: &["-n", "-v", "-t", "-u", "-r"],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Any),
            does: Does::SecurityPolicy,
        }],
    },
    Program {
        names: &["fuser"],
        value_opts: &["-n", "--namespace", "-SIGNAL"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-k", "--kill"]),
            does: Does::KillHolders,
        }],
    },
    Program {
        names: &["ss"],
        value_opts: &["-f", "--family", "-A", "--query", "-F", "--filter"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-K", "--kill"]),
            does: Does::KillHolders,
        }],
    },
    Program {
        names: &["history"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-c"]),
            does: Does::TracesErased("clears the shell history"),
        }],
    },
    Program {
        names: &["unset"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Is(&["histfile"])),
            does: Does::TracesErased("turns the shell history off"),
        }],
    },
    Program {
        names: &["export", "declare", "typeset", "readonly"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Is(&[
                "histfile=/dev/null",
                "histfile=",
                "histsize=0",
                "histfilesize=0",
                "savehist=0",
                // Every command line matches `*`: none is recorded.
                "histignore=*",
            ])),
            does: Does::TracesErased("turns the shell history off"),
        }],
    },
    Program {
        names: &["set"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(&When::Arg(Val::Is(&["+o"])), &When::Arg(Val::Is(&["history"]))),
            does: Does::TracesErased("turns the shell history off"),
        }],
    },
    Program {
        names: &["journalctl"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["--vacuum-time", "--vacuum-size", "--vacuum-files"]),
            does: Does::TracesErased("deletes the system journal"),
        }],
    },
    Program {
        names: &["passwd"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-d", "--delete"]),
            does: Does::Passwordless,
        }],
    },
    Program {
        names: &["usermod", "useradd"],
        value_opts: &[
            "-p",
            "--password",
            "-g",
            "-G",
            "-s",
            "-d",
            "-c",
            "-u",
            "-e",
            "-f",
            "-l",
            "-k",
            "-K",
            "-R",
            "-P",
            "--shell",
            "--home",
            "--groups",
            "--gid",
            "--uid",
            "--comment",
        ],
        clauses: &[
            // `useradd -o -u 0 backdoor`: a second account with root's uid is root.
            Clause {
                sub: &[],
                when: When::Value(&["-u", "--uid"], Val::Is(&["0"])),
                does: Does::Escape("gives an account uid 0: a second root"),
            },
            Clause {
                sub: &[],
                when: When::Value(&["-p", "--password"], Val::Off),
                does: Does::Passwordless,
            },
        ],
    },
    Program {
        names: &["redis-server"],
        value_opts: &[
            "--port",
            "--dir",
            "--dbfilename",
            "--requirepass",
            "--save",
            "--loglevel",
            "--protected-mode",
            "--bind",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Value(&["--protected-mode"], Val::Off),
                does: Does::AuthOff,
            },
            Clause {
                sub: &[],
                when: When::Value(&["--bind"], Val::AllInterfaces),
                does: Does::ExposedService,
            },
        ],
    },
    Program {
        names: &["mongod"],
        value_opts: &[
            "--port",
            "--dbpath",
            "--logpath",
            "--bind_ip",
            "--config",
            "-f",
            "--replSet",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Any(&["--noauth"]),
                    &When::NoneOf(&["--auth", "--keyFile", "--config", "-f"]),
                ),
                does: Does::AuthOff,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Any(&["--bind_ip_all"]),
                    &When::Value(&["--bind_ip"], Val::AllInterfaces),
                ),
                does: Does::ExposedService,
            },
        ],
    },
    Program {
        names: &["code-server", "openvscode-server"],
        value_opts: &["--auth", "--bind-addr", "--port", "--host"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Value(&["--auth"], Val::Is(&["none"])),
                does: Does::AuthOff,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Value(&["--bind-addr", "--host"], Val::AllInterfaces),
                    &When::Any(&["--without-connection-token"]),
                ),
                does: Does::ExposedService,
            },
            Clause {
                sub: &[],
                when: When::Any(&["--without-connection-token"]),
                does: Does::AuthOff,
            },
        ],
    },
    Program {
        // A web terminal: a shell for whoever reaches the port, on every interface by default
        // (writable unless `-R`, in the versions that have it).
        names: &["ttyd"],
        value_opts: &[
            "-p",
            "--port",
            "-c",
            "--credential",
            "-t",
            "-i",
            "--interface",
            "-a",
            "-u",
            "-g",
            "-P",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::NoneOf(&[
                    "-c",
                    "--credential",
                    "-R",
                    "--readonly",
                    "-v",
                    "--version",
                    "-h",
                    "--help",
                ]),
                does: Does::AuthOff,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::NoneOf(&["-i", "--interface"]),
                    &When::Value(&["-i", "--interface"], Val::AllInterfaces),
                ),
                does: Does::ExposedService,
            },
        ],
    },
    Program {
        // gotty shows a program read-only unless `-w` lets the visitors type into it.
        names: &["gotty"],
        value_opts: &["-p", "--port", "-c", "--credential", "-a", "--address"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Any(&["-w", "--permit-write"]),
                    &When::NoneOf(&["-c", "--credential"]),
                ),
                does: Does::AuthOff,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::NoneOf(&["-a", "--address"]),
                    &When::Value(&["-a", "--address"], Val::AllInterfaces),
                ),
                does: Does::ExposedService,
            },
        ],
    },
    Program {
        names: &["x11vnc"],
        value_opts: &["-display", "-rfbport", "-listen", "-passwd", "-rfbauth"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Any(&["-nopw"]),
                does: Does::AuthOff,
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::NoneOf(&["-localhost", "-listen"]),
                    &When::Value(&["-listen"], Val::AllInterfaces),
                ),
                does: Does::ExposedService,
            },
        ],
    },
    Program {
        names: &["pkill", "pgrep"],
        value_opts: &[
            "-u",
            "-U",
            "--uid",
            "--euid",
            "-g",
            "-G",
            "-P",
            "-s",
            "-t",
            "--signal",
            "--user",
            "--older-than",
            "--younger-than",
            "-F",
            "--pidfile",
            "--ns",
            "--nslist",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Value(&["-u", "-U", "--uid", "--euid", "--user"], Val::Any),
                does: Does::KillUser,
            },
            Clause {
                sub: &[],
                when: When::Always,
                does: Does::KillByName,
            },
        ],
    },
    // Each copier with its own options that take a value: short options bundle (`scp -rp`,
    // `rsync -avP`), so a letter listed here that is a flag elsewhere (`-p` preserves in scp
    // and rsync, is a port in ssh) would swallow the source after it.
    Program {
        names: &["scp", "sftp", "rcp"],
        value_opts: &[
            "-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J", "-D", "-X", "-B", "-b", "-R", "-s",
        ],
        clauses: COPY_TO_REMOTE,
    },
    Program {
        names: &["rsync"],
        value_opts: &[
            "-e",
            "-B",
            "-f",
            "-M",
            "-T",
            "--rsh",
            "--exclude",
            "--include",
            "--filter",
            "--port",
            "--password-file",
            "--files-from",
            "--log-file",
            "--backup-dir",
            "--temp-dir",
            "--chmod",
            "--chown",
            "--bwlimit",
        ],
        clauses: COPY_TO_REMOTE,
    },
    // PuTTY's copier: single-dash long options (`-pw`), no bundles.
    Program {
        names: &["pscp"],
        value_opts: &["-P", "-l", "-i", "-pw", "-hostkey", "-proxycmd"],
        clauses: COPY_TO_REMOTE,
    },
    Program {
        names: &["crontab"],
        value_opts: &["-u"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Either(&When::Arg(Val::Any), &When::NoneOf(&["-l", "-r", "-e", "-i"])),
                does: Does::Persist("installs a crontab: commands the system runs on a schedule"),
            },
            Clause {
                sub: &[],
                when: When::Any(&["-e"]),
                does: Does::EditSchedule,
            },
        ],
    },
    Program {
        names: &["sed", "gsed", "perl"],
        value_opts: &["-e", "--expression", "-f", "--file"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-i", "-i*", "--in-place*", "-pi*"]),
            does: Does::Writes,
        }],
    },
    Program {
        names: &["touch", "mkdir", "truncate"],
        value_opts: &[
            "-s",
            "--size",
            "-r",
            "--reference",
            "-m",
            "--mode",
            "-d",
            "--date",
            "-t",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Always,
            does: Does::Writes,
        }],
    },
    Program {
        names: &["at", "batch"],
        value_opts: &["-f", "-q", "-t"],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["-l", "-r", "-d", "-c", "-V"]),
            does: Does::Persist("schedules a command to run later, after this task"),
        }],
    },
    Program {
        names: &["trust"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &["anchor"],
            when: When::NoneOf(&["--remove", "-r"]),
            does: Does::SecurityOff("adds a certificate authority to the system's trust"),
        }],
    },
    // `xxd -r - FILE`: reverts a dump into FILE (without `-r` it only reads).
    Program {
        names: &["xxd"],
        value_opts: &[
            "-c",
            "-cols",
            "-g",
            "-groupsize",
            "-l",
            "-len",
            "-o",
            "-offset",
            "-s",
            "-seek",
            "-n",
            "-name",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-r", "-revert"]),
            does: Does::WritesLast,
        }],
    },
    Program {
        names: &["tee"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Always,
            does: Does::Writes,
        }],
    },
    Program {
        names: &["cp", "mv", "install", "ln"],
        value_opts: &[
            "-t",
            "--target-directory",
            "-m",
            "--mode",
            "-o",
            "--owner",
            "-g",
            "--group",
            "-S",
            "--suffix",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Always,
            does: Does::WritesLast,
        }],
    },
    Program {
        names: &["pam-auth-update"],
        value_opts: &["--package"],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Any(&[
                    "--enable",
                    "--disable",
                    "--remove",
                    "--force",
                    "--update",
                    "--updateall",
                ]),
                &When::First(Val::Is(&[
                    "select",
                    "enable-feature",
                    "disable-feature",
                    "apply-changes",
                ])),
            ),
            does: Does::SecurityPolicy,
        }],
    },
    // `ssh-keygen -p -N '' -f KEY`: a private key's passphrase removed.
    Program {
        names: &["ssh-keygen"],
        value_opts: &[
            "-N", "-P", "-f", "-t", "-b", "-C", "-Z", "-a", "-O", "-I", "-n", "-V", "-s", "-z", "-m", "-E",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(&When::Any(&["-p"]), &When::Value(&["-N"], Val::Off)),
            does: Does::Loosens("removes the passphrase of a private key"),
        }],
    },
    // Homebrew's services: launchd agents started at every login.
    Program {
        names: &["brew"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &["services", "start"],
            when: When::Always,
            does: Does::EnableService,
        }],
    },
    // screen's log file (`screen -L FILE CMD` in the spelling that takes one) is written.
    Program {
        names: &["screen"],
        value_opts: &["-S", "-c", "-s", "-T", "-e", "-h", "-p", "-t", "-X"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-L", "-Logfile"]),
            does: Does::Writes,
        }],
    },
    // macOS's keychain tool: a certificate made trusted for TLS.
    Program {
        names: &["security", "certctl"],
        value_opts: &["-k", "-r", "-p", "-d", "-s", "-e"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["add-trusted-cert", "trust"])),
                does: Does::SecurityOff("adds a certificate authority to the system's trust"),
            },
            // `security authorizationdb write system.privilege.admin allow`: a right that
            // asked for an administrator's password is granted to anyone.
            Clause {
                sub: &["authorizationdb", "write"],
                when: When::Arg(Val::Is(&["allow"])),
                does: Does::Passwordless,
            },
        ],
    },
    // launchd: a property list loaded or bootstrapped is registered where it lies; a job
    // submitted is kept running.
    Program {
        names: &["launchctl"],
        value_opts: &["-l", "-p", "-o", "-e", "-S", "-D"],
        clauses: &[
            Clause {
                sub: &["load"],
                when: When::Always,
                does: Does::RegistersFile,
            },
            Clause {
                sub: &["bootstrap"],
                when: When::Always,
                does: Does::RegistersFile,
            },
            Clause {
                sub: &["submit"],
                when: When::Always,
                does: Does::Persist("submits a job to launchd, which keeps it running"),
            },
            Clause {
                sub: &[],
                when: When::Both(
                    &When::First(Val::Is(&["unload", "bootout", "remove", "disable", "kill", "stop"])),
                    &When::Arg(Val::SecurityAgent),
                ),
                does: Does::SecurityOff("unloads a security agent"),
            },
        ],
    },
    // `skill -KILL -u bob`, `skill -9 node`: procps's older pkill.
    Program {
        names: &["skill"],
        value_opts: &["-t", "--tty", "-u", "--user", "-p", "--pid", "-c", "--command", "-n", "--ns", "--nslist"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Value(&["-u", "--user"], Val::Any),
                does: Does::KillUser,
            },
            Clause {
                sub: &[],
                when: When::NoneOf(&["-l", "--list", "-L", "--table", "-n", "--no-action", "-V", "--version"]),
                does: Does::KillByName,
            },
        ],
    },
    Program {
        names: &["osascript"],
        value_opts: &["-e", "-l", "-s"],
        clauses: &[
            Clause {
                sub: &[],
                // `make login item`, not `get the name of every login item`.
                when: When::Value(&["-e"], Val::Contains(&["make login item", "make new login item"])),
                does: Does::Persist("adds a login item: a program macOS starts at every login"),
            },
            Clause {
                sub: &[],
                when: When::Value(&["-e"], Val::Contains(&["hidden answer"])),
                does: Does::PhishPassword,
            },
        ],
    },
    Program {
        names: &["defaults"],
        value_opts: &["-host"],
        clauses: &[
            Clause {
                sub: &["write"],
                when: When::Arg(Val::Is(&["loginhook", "logouthook"])),
                does: Does::Persist("sets a login hook: a script macOS runs as root at every login"),
            },
            Clause {
                sub: &["write"],
                when: When::Both(
                    &When::Arg(Val::Contains(&[
                        "com.apple.security",
                        "com.apple.alf",
                        "com.apple.launchservices",
                        "com.apple.systempolicy",
                    ])),
                    &When::Arg(Val::Off),
                ),
                does: Does::SecurityOff("turns a macOS protection off (Gatekeeper, the firewall or quarantine)"),
            },
        ],
    },
    // macOS protections: System Integrity Protection, Gatekeeper, FileVault, the application
    // firewall, the unified log, Time Machine, the quarantine mark.
    Program {
        names: &["csrutil"],
        value_opts: &[],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Arg(Val::Is(&["disable"])),
                does: Does::SecurityOff("turns System Integrity Protection off"),
            },
            Clause {
                sub: &["enable"],
                when: When::Any(&["--without", "--no-internal"]),
                does: Does::SecurityOff("turns part of System Integrity Protection off"),
            },
        ],
    },
    Program {
        names: &["spctl"],
        value_opts: &["--label", "-t", "--type", "--context", "--path", "--rule", "--priority"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Any(&["--master-disable", "--global-disable"]),
                does: Does::SecurityOff("turns Gatekeeper off: any downloaded program runs unchecked"),
            },
            Clause {
                sub: &[],
                when: When::Any(&["--add", "--enable"]),
                does: Does::Loosens("lets a program past Gatekeeper"),
            },
        ],
    },
    Program {
        names: &["fdesetup"],
        value_opts: &["-user", "-usertoremove", "-inputplist", "-outputplist"],
        clauses: &[Clause {
            sub: &["disable"],
            when: When::Always,
            does: Does::SecurityOff("turns FileVault disk encryption off"),
        }],
    },
    Program {
        names: &["socketfilterfw"],
        value_opts: &[
            "--setglobalstate",
            "--setblockall",
            "--setallowsigned",
            "--setallowsignedapp",
            "--setstealthmode",
            "--setloggingmode",
            "--add",
            "--remove",
            "--unblockapp",
            "--blockapp",
            "--getappblocked",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Value(&["--setglobalstate"], Val::Off),
                does: Does::SecurityOff("turns the macOS application firewall off"),
            },
            Clause {
                sub: &[],
                when: When::Either(
                    &When::Any(&["--add", "--unblockapp"]),
                    &When::Either(
                        &When::Value(
                            &["--setallowsigned", "--setallowsignedapp"],
                            Val::Is(&["on", "1", "enable"]),
                        ),
                        &When::Value(&["--setstealthmode", "--setblockall", "--setloggingmode"], Val::Off),
                    ),
                ),
                does: Does::Loosens("lets a program through the macOS application firewall"),
            },
        ],
    },
    Program {
        names: &["log"],
        value_opts: &[
            "--mode",
            "--subsystem",
            "--process",
            "--predicate",
            "--style",
            "--last",
            "--output",
        ],
        clauses: &[
            Clause {
                sub: &["erase"],
                when: When::Always,
                does: Does::SecurityOff("erases the system's unified log"),
            },
            Clause {
                sub: &["config"],
                when: When::Value(&["--mode"], Val::Contains(&["level:off", "persist:off"])),
                does: Does::SecurityOff("turns the system's logging off"),
            },
        ],
    },
    Program {
        names: &["tmutil"],
        value_opts: &["-d"],
        clauses: &[
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["disable", "disablelocal", "addexclusion"])),
                does: Does::Loosens("pauses Time Machine backups"),
            },
            Clause {
                sub: &[],
                when: When::First(Val::Is(&["delete", "deletelocalsnapshots", "thinlocalsnapshots"])),
                does: Does::DeleteLocalData("deletes Time Machine backups or snapshots"),
            },
        ],
    },
    Program {
        names: &["xattr"],
        value_opts: &["-p", "-w"],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::Either(&When::Arg(Val::Is(&["com.apple.quarantine"])), &When::Any(&["-c"])),
                &When::Arg(Val::Prefix(&["~", "/", "$home"])),
            ),
            does: Does::Loosens("removes the quarantine mark: Gatekeeper no longer checks the download"),
        }],
    },
    Program {
        names: &["pmset"],
        value_opts: &["-a", "-b", "-c", "-u", "-g"],
        clauses: &[Clause {
            sub: &[],
            when: When::Arg(Val::Is(&["sleepnow", "restartnow"])),
            does: Does::MachinePower,
        }],
    },
    Program {
        names: &["kextload", "kextunload", "kmutil"],
        value_opts: &["-b", "--bundle-identifier", "-p", "--bundle-path"],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["showloaded", "--help"]),
            does: Does::Kernel("loads or unloads a kernel extension"),
        }],
    },
    // Auditing: adding a rule is a policy change, `-D`, `-e 0` and `never` rules stop it.
    Program {
        names: &["auditctl"],
        value_opts: &[
            "-a", "-A", "-w", "-W", "-k", "-p", "-R", "-b", "-f", "-r", "-d", "-S", "-F", "-e",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Any(&["-D"]),
                does: Does::SecurityOff("deletes every audit rule"),
            },
            Clause {
                sub: &[],
                when: When::Value(&["-e"], Val::Is(&["0"])),
                does: Does::SecurityOff("turns auditing off"),
            },
            Clause {
                sub: &[],
                when: When::Value(&["-a", "-A"], Val::Contains(&["never"])),
                does: Does::SecurityOff("adds an audit rule that stops recording"),
            },
            Clause {
                sub: &[],
                when: When::Any(&["-a", "-A", "-w", "-W", "-d", "-R"]),
                does: Does::SecurityPolicy,
            },
        ],
    },
    // Registering a directory of programs to run now.
    Program {
        names: &["run-parts"],
        value_opts: &["-u", "--umask", "--arg", "-a", "--regex"],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["--test", "--list", "-V", "--version", "-h", "--help"]),
            does: Does::RunsPrograms,
        }],
    },
    // Keystrokes, traffic and screens: what passes through the machine.
    Program {
        names: &[
            "logkeys",
            "lkl",
            "keysniffer",
            "xkeylogger",
            "pykeylogger",
            "keylogger",
            "xspy",
            "uberkey",
        ],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["--help", "-h", "--version", "--kill", "-k"]),
            does: Does::Keylog,
        }],
    },
    Program {
        names: &["xinput"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::First(Val::Is(&["test", "test-xi2"])),
            does: Does::Keylog,
        }],
    },
    // Packet capture is diagnosis until it goes after logins: credential fields
    // (`http.authorization`), cleartext login protocols (ftp, telnet, pop3, imap) or their
    // ports. The sniffers built for passwords always do.
    Program {
        names: &[
            "dsniff",
            "urlsnarf",
            "mailsnarf",
            "filesnarf",
            "msgsnarf",
            "pcredz",
            "net-creds",
        ],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["-h", "--help", "--version"]),
            does: Does::Eavesdrop("sniffs passwords from the network"),
        }],
    },
    Program {
        names: &["tcpdump", "tshark", "dumpcap", "ngrep", "tcpflow", "termshark"],
        value_opts: &[
            "-i", "-w", "-c", "-s", "-C", "-G", "-W", "-Y", "-T", "-e", "-f", "-E", "-o", "-b", "-a", "-Z", "-z", "-B",
            "-y", "-F", "-M", "-O", "-R", "-d",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::NoneOf(&["-r", "-D", "--list-interfaces", "-h", "--help", "--version", "-L"]),
                &When::Either(
                    &When::Either(
                        &When::Arg(Val::Contains(CREDENTIAL_TRAFFIC)),
                        &When::Arg(Val::Is(&["21", "23", "110", "143", "ftp", "telnet", "pop3", "imap"])),
                    ),
                    &When::Value(&["-Y", "-e", "-f", "-R"], Val::Contains(CREDENTIAL_TRAFFIC)),
                ),
            ),
            does: Does::Eavesdrop("captures logins passing the network: others' passwords"),
        }],
    },
    Program {
        names: &["xwd"],
        value_opts: &["-out", "-display", "-id", "-name"],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-root"]),
            does: Does::Eavesdrop("captures the whole screen"),
        }],
    },
    // ImageMagick's `import -window root` (also as `magick import`, GraphicsMagick's `gm
    // import`): the whole screen, not a window the user picks.
    Program {
        names: &["import"],
        value_opts: IMPORT_VALUE_OPTIONS,
        clauses: &[Clause {
            sub: &[],
            when: When::Value(&["-window"], Val::Is(&["root"])),
            does: Does::Eavesdrop("captures the whole screen"),
        }],
    },
    Program {
        names: &["magick", "gm"],
        value_opts: IMPORT_VALUE_OPTIONS,
        clauses: &[Clause {
            sub: &["import"],
            when: When::Value(&["-window"], Val::Is(&["root"])),
            does: Does::Eavesdrop("captures the whole screen"),
        }],
    },
    Program {
        names: &["script"],
        value_opts: &[
            "-c",
            "--command",
            "-E",
            "--echo",
            "-O",
            "--log-out",
            "-I",
            "--log-in",
            "-B",
            "--log-io",
            "-T",
            "--log-timing",
            "-m",
            "--logging-format",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Value(
                    &["-c", "--command"],
                    Val::Contains(&[
                        "ssh ", "su ", "sudo ", "mysql ", "psql ", "passwd", "login", "kinit", "gpg ",
                    ]),
                ),
                does: Does::Eavesdrop("records a login session's terminal to a file"),
            },
            Clause {
                sub: &[],
                when: When::Any(&["-I", "--log-in", "-B", "--log-io"]),
                does: Does::Keylog,
            },
        ],
    },
    Program {
        names: &["trap"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Both(
                &When::Arg(Val::Contains(&["bash_command", "history 1"])),
                &When::Arg(Val::Is(&["debug"])),
            ),
            does: Does::Eavesdrop("records every command the shell runs"),
        }],
    },
    // Another process's memory or system calls.
    Program {
        names: &["gcore", "procdump"],
        value_opts: &["-o", "-s", "-c", "-n"],
        clauses: &[Clause {
            sub: &[],
            when: When::NoneOf(&["--help", "--version", "-h"]),
            does: Does::ReadsProcess,
        }],
    },
    Program {
        names: &["gdb", "gdb-multiarch", "strace", "ltrace", "lldb", "pwndbg"],
        value_opts: &[],
        clauses: &[Clause {
            sub: &[],
            when: When::Either(
                &When::Any(&["-p", "--pid", "--attach", "-attach-pid"]),
                &When::Arg(Val::Prefix(&["attach ", "--pid="])),
            ),
            does: Does::ReadsProcess,
        }],
    },
    // The Docker daemon with its API on TCP: without `--tlsverify`, root for anyone who
    // reaches the port.
    Program {
        names: &["dockerd"],
        value_opts: &[
            "-H",
            "--host",
            "-p",
            "--pidfile",
            "--data-root",
            "-g",
            "--config-file",
            "--log-level",
            "-l",
        ],
        clauses: &[
            Clause {
                sub: &[],
                when: When::Value(
                    &["-H", "--host"],
                    Val::Contains(&["tcp://0.0.0.0", "tcp://:", "tcp://[::]", "tcp://*"]),
                ),
                does: Does::ExposedService,
            },
            Clause {
                sub: &[],
                when: When::Both(
                    &When::Value(&["-H", "--host"], Val::Prefix(&["tcp://"])),
                    &When::NoneOf(&["--tlsverify"]),
                ),
                does: Does::AuthOff,
            },
        ],
    },
    // Disk inspectors: their reading verbs change nothing.
    Program {
        names: &["smartctl"],
        value_opts: &[
            "-d",
            "--device",
            "-T",
            "--tolerance",
            "-b",
            "--badsum",
            "-r",
            "--report",
            "-n",
            "--nocheck",
        ],
        clauses: &[Clause {
            sub: &[],
            when: When::Any(&["-s", "--smart", "-o", "--offlineauto", "-S", "--saveauto", "--set"]),
            does: Does::ChangeDisk,
        }],
    },
    Program {
        names: &["cryptsetup"],
        value_opts: &[
            "-d",
            "--key-file",
            "-c",
            "--cipher",
            "-s",
            "--key-size",
            "-h",
            "--hash",
            "-S",
            "--key-slot",
            "--type",
            "--header",
        ],
        clauses: &[Clause {
            sub: &[],
            // `open --persistent`: the options written into the header for good.
            when: When::Either(
                &When::Any(&["--persistent"]),
                &When::First(Val::Is(&[
                    "luksaddkey",
                    "lukschangekey",
                    "luksconvertkey",
                    "reencrypt",
                    "convert",
                    "luksheaderrestore",
                    "resize",
                    "repair",
                    "config",
                    "token",
                ])),
            ),
            does: Does::ChangeDisk,
        }],
    },
];

/// Programs whose specs describe every effect they have: a use no clause matches changes
/// nothing (`launchctl unload`, `run-parts --test`, `smartctl -a`, `cryptsetup luksDump`,
/// `parted print`, `visudo -c`, `auditctl -l`), so the paths they are handed are not guessed
/// at. Other specs describe some uses only; the rest is judged like a program without a spec.
pub const FULLY_DESCRIBED: &[&str] = &[
    "launchctl",
    "run-parts",
    "smartctl",
    "cryptsetup",
    "parted",
    "sgdisk",
    "sfdisk",
    "visudo",
    "auditctl",
    "systemctl",
    "wipefs",
    "hdparm",
    "apparmor_parser",
];

/// Programs that keep the system's own state to its own configuration (rotate the logs it
/// configures, restore the security labels its policy names, rebuild its caches): routine
/// upkeep, quiet like the readers below.
/// They still write where they are told to (`logrotate -l FILE` logs into FILE), so only the
/// system paths they are handed are let through, not the places the system runs commands from.
pub const UPKEEP: &[&str] = &[
    "logrotate",
    "restorecon",
    "updatedb",
    "mandb",
    "makewhatis",
    "fc-cache",
    "update-desktop-database",
    "update-mime-database",
    "gtk-update-icon-cache",
    "glib-compile-schemas",
    "locale-gen",
];

/// Programs known to only read, inspect, build or test: handed a system path, they still only
/// read it (or write inside the workspace), so they pass quietly.
pub const QUIET: &[&str] = &[
    // `source ~/.bashrc`, `. /etc/os-release`: the shell reads a file and runs it, as every
    // login shell runs the startup files; writing them is what the persistence rules judge.
    "source",
    ".",
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "ls",
    "ll",
    "tree",
    "find",
    "fd",
    "stat",
    "file",
    "wc",
    "du",
    "df",
    "diff",
    "cmp",
    "comm",
    "sort",
    "uniq",
    "cut",
    "tr",
    "awk",
    "gawk",
    "sed",
    "jq",
    "yq",
    "xxd",
    "hexdump",
    "od",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "realpath",
    "readlink",
    "dirname",
    "basename",
    "which",
    "whereis",
    "type",
    "command",
    "echo",
    "printf",
    "test",
    "[",
    "true",
    "false",
    "pwd",
    "id",
    "whoami",
    "uname",
    "hostname",
    "date",
    "env",
    "printenv",
    "ps",
    "top",
    "htop",
    "free",
    "uptime",
    "lsof",
    "ss",
    "netstat",
    "ip",
    "ifconfig",
    "ping",
    "dig",
    "nslookup",
    "host",
    "getent",
    "man",
    "info",
    "help",
    "tldr",
    "bat",
    "column",
    "nl",
    "fold",
    "fmt",
    "tac",
    "rev",
    "paste",
    "join",
    "split",
    "csplit",
    "expand",
    "unexpand",
    "look",
    "zcat",
    "zless",
    "zgrep",
    "bzcat",
    "xzcat",
    "lsblk",
    "blkid",
    "fdisk",
    "lscpu",
    "lspci",
    "lsusb",
    "lsmod",
    "dmesg",
    "journalctl",
    "last",
    "who",
    "w",
    "groups",
    "cargo",
    "rustc",
    "rustup",
    "rustfmt",
    "clippy-driver",
    "go",
    "gofmt",
    "gcc",
    "g++",
    "cc",
    "c++",
    "clang",
    "clang++",
    "make",
    "cmake",
    "ninja",
    "meson",
    "bazel",
    "python",
    "python3",
    "pip",
    "pip3",
    "pytest",
    "tox",
    "nox",
    "uv",
    "poetry",
    "node",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "tsc",
    "eslint",
    "prettier",
    "jest",
    "vitest",
    "mocha",
    "java",
    "javac",
    "mvn",
    "gradle",
    "dotnet",
    "ruby",
    "bundle",
    "rake",
    "rspec",
    "php",
    "composer",
    "swift",
    "swiftc",
    "zig",
    "ghc",
    "cabal",
    "stack",
    "mix",
    "elixir",
    "erl",
    "rebar3",
    "perl",
    "prove",
    "shellcheck",
    "mypy",
    "ruff",
    "black",
    "flake8",
    "pylint",
    "isort",
    "gdb",
    "lldb",
    "strace",
    "ltrace",
    "valgrind",
    "perf",
    "time",
    "hyperfine",
    "git",
    "svn",
    "hg",
    "code",
    "vim",
    "nvim",
    "nano",
    "emacs",
    "vi",
    "xdg-open",
    "open",
    "tar",
    "zip",
    "unzip",
    "gzip",
    "gunzip",
    "bzip2",
    "xz",
    "7z",
    "base64",
    "openssl",
    "gpg",
    "ssh-keygen",
    "curl",
    "wget",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "terraform",
    "ansible",
    "ansible-playbook",
    "vagrant",
    "systemctl",
    "service",
    "journalctl",
    "apt",
    "apt-get",
    "apt-cache",
    "dpkg",
    "dnf",
    "yum",
    "rpm",
    "pacman",
    "brew",
    "snap",
    "flatpak",
    "nix",
    "conda",
    "mamba",
    "sdkmanager",
];
