//! Files encrypted where they lie: the method of ransomware (and of a careless agent).
//!
//! An encryptor handed the user's or the system's files (outside the workspace and the temp
//! directories) makes them unreadable to whoever lacks the key. Each encryptor is described
//! once ([`Encryptor`]): the words that make it encrypt rather than decrypt or list, the
//! options that take a value, and whether its operands are replaced in place or copied to an
//! output. The rule then judges the files, whichever tool it is:
//!
//! - **blocked**: files encrypted in place (`ccencrypt F`, `openssl enc -in F -out F`), or in
//!   bulk (several files, a folder, a glob, the home directory itself, a recursive run);
//! - **warned**: one file outside the workspace copied into an encrypted one (`gpg -c
//!   ~/notes.txt`): the original stays, but nothing in a task asks for it.
//!
//! Encrypting the workspace's or a temp directory's files, decrypting, and listing pass; a
//! credential file encrypted (read whole) is `secrets`' to judge.

use super::place::{place_of, Place};
use crate::guard::rules::{block, warn};
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::{GuardContext, SimpleCommand};

/// The rule's id.
pub const ENCRYPTED_FILES: &str = "deletion.encrypted_files";

/// The safer alternative for the rule.
pub fn alternative(rule: &str) -> Option<&'static str> {
    (rule == ENCRYPTED_FILES)
        .then_some("encrypt a copy inside the workspace, and leave the user's own files as they are")
}

/// How one encryptor is told to encrypt, and where its files are.
struct Encryptor {
    names: &'static [&'static str],
    /// It encrypts only with one of these words (`-c`, `--encrypt`, `a` with `-p`); empty:
    /// always, unless told to decrypt.
    encrypt: &'static [&'static str],
    /// Letters that make it encrypt inside a bundle of one-letter options (`gpg -ce`, `zip
    /// -rP PW`).
    encrypt_letters: &'static str,
    /// These words make it decrypt, list or show instead.
    other_modes: &'static [&'static str],
    /// Options that take the next word as their value (a key, a recipient, the output).
    value_opts: &'static [&'static str],
    /// The options that name the input files (`-in F`); empty: the operands.
    input_opts: &'static [&'static str],
    /// The options that name the output file (`-out F`, `-o F`).
    output_opts: &'static [&'static str],
    /// Operands that are not inputs, at the front (7z's command letter, zip's archive).
    skip_operands: usize,
    /// Each input is replaced by its encrypted form (no copy is kept).
    in_place: bool,
    /// Options that take folders whole.
    recursive: &'static [&'static str],
    /// Options that delete each input once it is encrypted (`mcrypt -u`, `rar -df`, `zip -m`):
    /// in place, in effect.
    deletes_inputs: &'static [&'static str],
}

/// What an entry leaves unsaid: it always encrypts, names its inputs as operands, keeps them.
const OTHERWISE: Encryptor = Encryptor {
    names: &[],
    encrypt: &[],
    encrypt_letters: "",
    other_modes: &[],
    value_opts: &[],
    input_opts: &[],
    output_opts: &[],
    skip_operands: 0,
    in_place: false,
    recursive: &[],
    deletes_inputs: &[],
};

const ENCRYPTORS: &[Encryptor] = &[
    Encryptor {
        names: &["gpg", "gpg2"],
        // `--sym`, `--enc`: gpg takes any unambiguous prefix of a long option.
        encrypt: &["--sym*", "--enc*"],
        encrypt_letters: "ce",
        other_modes: &["-d", "--decrypt", "--list-packets", "--verify", "--import", "--export"],
        value_opts: &[
            "-r",
            "--recipient",
            "-u",
            "--local-user",
            "--passphrase",
            "--passphrase-fd",
            "--passphrase-file",
            "--cipher-algo",
            "--compress-algo",
            "--homedir",
            "--pinentry-mode",
            "-z",
        ],
        output_opts: &["-o", "--output"],
        ..OTHERWISE
    },
    Encryptor {
        names: &["ccencrypt", "ccrypt"],
        other_modes: &[
            "-d",
            "--decrypt",
            "-c",
            "--cat",
            "-x",
            "--keychange",
            "-u",
            "--unixcrypt",
        ],
        value_opts: &["-K", "--key", "-k", "--keyfile", "-H", "--key2", "-s", "--suffix"],
        in_place: true,
        ..OTHERWISE
    },
    Encryptor {
        names: &["openssl"],
        // `openssl aes-256-cbc ..`: a cipher's name is `enc` with that cipher.
        encrypt: &[
            "enc",
            "-encrypt",
            "aes*",
            "des*",
            "chacha*",
            "camellia*",
            "bf-*",
            "cast*",
            "rc2*",
            "rc4*",
            "sm4*",
            "aria*",
            "seed*",
            "idea*",
        ],
        other_modes: &["-d", "-decrypt", "-verify", "-sign", "-text"],
        input_opts: &["-in"],
        output_opts: &["-out"],
        ..OTHERWISE
    },
    Encryptor {
        names: &["age", "rage"],
        other_modes: &["-d", "--decrypt"],
        value_opts: &[
            "-r",
            "--recipient",
            "-R",
            "--recipients-file",
            "-i",
            "--identity",
            "-o",
            "--output",
        ],
        output_opts: &["-o", "--output"],
        ..OTHERWISE
    },
    Encryptor {
        names: &["7z", "7za", "7zz", "7zr"],
        // `-pPW`, or `-p` alone: it asks for the password.
        encrypt: &["-p*"],
        other_modes: &["x", "e", "l", "t"],
        // `7z a ARCHIVE FILES`: the command letter, then the archive.
        skip_operands: 2,
        recursive: &["-r"],
        deletes_inputs: &["-sdel"],
        ..OTHERWISE
    },
    Encryptor {
        names: &["zip"],
        encrypt: &["--encrypt", "--password"],
        encrypt_letters: "eP",
        value_opts: &["-P", "--password", "-b", "-n", "-t", "-x", "-i"],
        // `zip ARCHIVE FILES`.
        skip_operands: 1,
        recursive: &["-r", "--recurse-paths", "-R"],
        deletes_inputs: &["-m", "--move"],
        ..OTHERWISE
    },
    Encryptor {
        names: &["rar"],
        encrypt: &["-p*", "-hp*"],
        other_modes: &["x", "e", "l", "lt", "v", "vt", "t", "p"],
        // `rar a ARCHIVE FILES`.
        skip_operands: 2,
        recursive: &["-r"],
        deletes_inputs: &["-df", "-dw"],
        ..OTHERWISE
    },
    Encryptor {
        // gpg-zip is gpgtar's predecessor, with the same modes and `--tar`/`--tar-args`.
        names: &["gpgtar", "gpg-zip"],
        encrypt: &["--encrypt", "-e", "--symmetric", "-c"],
        encrypt_letters: "ce",
        other_modes: &["--decrypt", "-d", "--extract", "-x", "--list-archive", "-t"],
        value_opts: &[
            "-r",
            "--recipient",
            "-u",
            "--local-user",
            "--gpg",
            "--gpg-args",
            "-C",
            "--directory",
            "--set-filename",
            "--tar",
            "--tar-args",
            "-T",
            "--files-from",
        ],
        output_opts: &["-o", "--output"],
        ..OTHERWISE
    },
    Encryptor {
        names: &["aescrypt"],
        encrypt: &["-e"],
        other_modes: &["-d"],
        value_opts: &["-p", "-k"],
        output_opts: &["-o"],
        ..OTHERWISE
    },
    Encryptor {
        names: &["mcrypt"],
        other_modes: &["-d", "--decrypt", "--list", "--list-hash", "-V", "--version"],
        value_opts: &[
            "-a",
            "--algorithm",
            "-m",
            "--mode",
            "-k",
            "-f",
            "--keyfile",
            "-h",
            "--hash",
            "-s",
            "--keysize",
            "-o",
            "--keymode",
        ],
        deletes_inputs: &["-u", "--unlink"],
        ..OTHERWISE
    },
    // `scrypt enc IN [OUT]`.
    Encryptor {
        names: &["scrypt"],
        encrypt: &["enc"],
        other_modes: &["dec", "info"],
        value_opts: &["-t", "-m", "-M", "--passphrase"],
        skip_operands: 1,
        ..OTHERWISE
    },
    // `sops -e -i F` replaces the file with its encrypted form.
    Encryptor {
        names: &["sops"],
        // `sops encrypt -i F` (sops 3.9) spells the mode as a subcommand.
        encrypt: &["-e", "--encrypt", "encrypt"],
        encrypt_letters: "e",
        other_modes: &["-d", "--decrypt", "-r", "--rotate", "--extract", "decrypt"],
        value_opts: &[
            "-a",
            "-p",
            "-k",
            "--age",
            "--pgp",
            "--kms",
            "--gcp-kms",
            "--azure-kv",
            "--hc-vault-transit",
            "--input-type",
            "--output-type",
            "--encrypted-regex",
            "--unencrypted-regex",
            "--config",
        ],
        output_opts: &["--output"],
        deletes_inputs: &["-i", "--in-place", "-ei", "-ie"],
        ..OTHERWISE
    },
    // `ansible-vault encrypt F..` replaces each file.
    Encryptor {
        names: &["ansible-vault"],
        encrypt: &["encrypt"],
        other_modes: &["decrypt", "view", "edit", "create", "rekey", "encrypt_string"],
        value_opts: &["--vault-id", "--vault-password-file", "--vault-pass-file"],
        output_opts: &["--output"],
        skip_operands: 1,
        in_place: true,
        ..OTHERWISE
    },
    // bcrypt replaces each file with its `.bfe` unless told to keep it (`-r`) or to print.
    Encryptor {
        names: &["bcrypt"],
        other_modes: &["-o", "-r"],
        value_opts: &["-s"],
        in_place: true,
        ..OTHERWISE
    },
];

/// `deletion.encrypted_files` for `cmd` (see the module doc). `listed`: the folder whose files
/// a listing upstream feeds it (`find ~ -type f | xargs gpg -c`): every file there, in bulk.
/// Whether `name` is one of the encryptors described here.
pub fn is_encryptor(name: &str) -> bool {
    ENCRYPTORS.iter().any(|e| e.names.contains(&name))
}

pub fn check(cmd: &SimpleCommand, listed: Option<&str>, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let Some(tool) = ENCRYPTORS.iter().find(|e| e.names.contains(&name)) else {
        return;
    };
    let args = &cmd.argv[1..];
    let said = |words: &[&str]| {
        args.iter().any(|a| {
            words.iter().any(|w| match w.strip_suffix('*') {
                Some(prefix) => a.starts_with(prefix),
                None => a == w,
            })
        })
    };
    let bundled = args.iter().any(|a| {
        a.starts_with('-')
            && !a.starts_with("--")
            && a[1..].starts_with(|c: char| c.is_ascii_alphabetic())
            && a[1..].chars().any(|c| tool.encrypt_letters.contains(c))
    });
    let encrypts = tool.encrypt.is_empty() && tool.encrypt_letters.is_empty() || said(tool.encrypt) || bundled;
    if !encrypts || said(tool.other_modes) {
        return;
    }
    let value_of = |opts: &[&str]| -> Vec<&str> {
        args.iter()
            .enumerate()
            .filter(|(_, a)| opts.contains(&a.as_str()))
            .filter_map(|(k, _)| args.get(k + 1).map(String::as_str))
            .collect()
    };
    let inputs: Vec<&str> = if tool.input_opts.is_empty() {
        let mut operands = Vec::new();
        let mut k = 0;
        while let Some(a) = args.get(k) {
            if tool.value_opts.contains(&a.as_str()) || tool.output_opts.contains(&a.as_str()) {
                k += 2;
                continue;
            }
            if !a.starts_with('-') {
                operands.push(a.as_str());
            }
            k += 1;
        }
        operands.into_iter().skip(tool.skip_operands).collect()
    } else {
        value_of(tool.input_opts)
    };
    let outputs = value_of(tool.output_opts);
    let cwd = cmd.cwd.as_deref();
    let theirs = |p: &str| {
        matches!(
            place_of(p, cwd, ctx.workspace),
            Place::Home | Place::Startup | Place::System | Place::Outside
        )
    };
    let fed = listed.filter(|folder| theirs(folder));
    let Some(file) = inputs.iter().copied().find(|p| theirs(p)).or(fed) else {
        return;
    };
    let bulk = fed.is_some()
        || inputs.len() > 1
        || file.contains(['*', '?'])
        || file.ends_with('/')
        // In the home directory, a name without an extension is most often a folder
        // (`~/Documents`); system files often have none (`/etc/hosts`).
        || (place_of(file, cwd, ctx.workspace) == Place::Home && !file.rsplit('/').next().unwrap_or(file).contains('.'))
        || is_home_itself(file)
        || args.iter().any(|a| tool.recursive.contains(&a.as_str()));
    let in_place = tool.in_place || said(tool.deletes_inputs) || outputs.iter().any(|o| inputs.contains(o));
    if bulk || in_place {
        out.push(block(
            Category::Deletion,
            ENCRYPTED_FILES,
            Risk::High,
            cmd,
            format!(
                "encrypts {file} {}: without the key the user's files are lost (the method of ransomware)",
                if in_place {
                    "in place"
                } else {
                    "and more files outside the workspace"
                }
            ),
        ));
    } else {
        out.push(warn(
            Category::Deletion,
            ENCRYPTED_FILES,
            cmd,
            format!("encrypts {file}, a file outside the workspace"),
        ));
    }
}

/// `~`, `$HOME`, `/home/dev`: the home directory as a whole.
fn is_home_itself(path: &str) -> bool {
    crate::guard::targets::home_relative(path).is_some_and(|rest| rest.trim_matches('/').is_empty())
}
