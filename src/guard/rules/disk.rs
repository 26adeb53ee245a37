//! Disk: writes to block devices (`dd of=/dev/sda`, `> /dev/nvme0n1`), `mkfs` and
//! partitioning tools on devices, `wipefs`/`blkdiscard`, and `shred` outside the workspace.
//! `cp`/`tee`/`pv` onto a device is a device write too; `mkfs` on an image file inside the
//! workspace is ordinary work. `volume`: tearing down RAID arrays, device-mapper targets,
//! LVM volumes, LUKS headers and ZFS pools (`mdadm --stop`, `dmsetup remove`, `lvremove`,
//! `cryptsetup luksFormat`, `zpool destroy`); their listing commands pass.

use super::{block, warn};
use crate::guard::targets::classify_target;
use crate::guard::verdict::{Category, Risk, Violation};
use crate::guard::{GuardContext, SimpleCommand};

pub const DEVICE_WRITE: &str = "disk.device_write";
pub const MKFS: &str = "disk.mkfs";
pub const SHRED: &str = "disk.shred";
pub const PARTITION: &str = "disk.partition";
pub const VOLUME: &str = "disk.volume";

/// The teardown this volume-management command performs, if any.
fn volume_teardown(name: &str, args: &[String]) -> Option<&'static str> {
    let has = |xs: &[&str]| args.iter().any(|a| xs.contains(&a.as_str()));
    let sub = args.iter().find(|a| !a.starts_with('-')).map(String::as_str);
    match name {
        "mdadm"
            if has(&[
                "--stop",
                "-S",
                "--remove",
                "--fail",
                "--zero-superblock",
                "--create",
                "-C",
            ]) =>
        {
            Some("stops, fails or rewrites a RAID array")
        }
        "dmsetup" if matches!(sub, Some("remove" | "remove_all" | "wipe_table" | "clear" | "reload")) => {
            Some("removes or rewrites a device-mapper target")
        }
        "lvremove" | "vgremove" | "pvremove" | "lvreduce" => Some("removes or shrinks an LVM volume"),
        "cryptsetup"
            if matches!(
                sub,
                Some("luksFormat" | "erase" | "luksErase" | "luksKillSlot" | "luksRemoveKey")
            ) =>
        {
            Some("erases a LUKS header or key slot, making the volume unreadable")
        }
        "zpool" if matches!(sub, Some("destroy" | "labelclear")) => Some("destroys a ZFS pool"),
        "zfs" if sub == Some("destroy") => Some("destroys a ZFS dataset"),
        _ => None,
    }
}

/// A block device path (`/dev/sda`, `/dev/nvme0n1p1`, `/dev/disk0`, `/dev/mapper/x`).
pub fn is_device(path: &str) -> bool {
    // `/dev//sda`, `/dev/./sda`, `/dev/../dev/sda`: the same device, spelled the long way.
    if path.contains("//") || path.contains("/.") {
        let normal = crate::guard::normalize(std::path::Path::new(path));
        return normal.to_str().is_some_and(|n| n != path && is_device(n));
    }
    let Some(dev) = path.strip_prefix("/dev/") else {
        return false;
    };
    // `/dev/fd/2` is a file descriptor (stderr), not a floppy disk (`/dev/fd0`), and `/dev/sr0`
    // a disc where `/dev/srandom` is not; `/dev/loop-control` and `/dev/mapper/control` hand
    // out devices and hold no data.
    let numbered = |prefix: &str| {
        dev.strip_prefix(prefix)
            .is_some_and(|n| !n.starts_with(|c: char| c.is_ascii_digit()))
    };
    if numbered("fd") || numbered("sr") || matches!(dev, "loop-control" | "mapper/control") {
        return false;
    }
    [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "rdisk", "mapper/", "md", "dm-", "loop", "nbd", "sr", "fd",
    ]
    .iter()
    .any(|p| dev.starts_with(p))
}

pub fn check(cmd: &SimpleCommand, ctx: &GuardContext<'_>, out: &mut Vec<Violation>) {
    let name = cmd.name();
    let d = Category::Disk;
    if let Some(r) = cmd.redirects.iter().find(|r| is_device(r)) {
        out.push(block(
            d,
            DEVICE_WRITE,
            Risk::Critical,
            cmd,
            format!("writes over the block device {r}"),
        ));
        return;
    }
    let args = &cmd.argv[1.min(cmd.argv.len())..];
    let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let onto_device = match name {
        "cp" | "install" | "ddrescue" => operands.last().filter(|t| operands.len() >= 2 && is_device(t)),
        "tee" | "pv" => operands.iter().find(|t| is_device(t)),
        _ => None,
    };
    if let Some(t) = onto_device {
        out.push(block(
            d,
            DEVICE_WRITE,
            Risk::Critical,
            cmd,
            format!("{name} writes over the block device {t}"),
        ));
        return;
    }
    match name {
        "dd" => {
            if let Some(of) = args.iter().find_map(|a| a.strip_prefix("of=")) {
                if is_device(of) {
                    out.push(block(
                        d,
                        DEVICE_WRITE,
                        Risk::Critical,
                        cmd,
                        format!("dd writes over the block device {of}"),
                    ));
                }
            }
        }
        // `bcachefs format /dev/sdb`, `mkfs` by its subcommand name.
        "bcachefs" if args.first().is_some_and(|a| *a == "format") && args.iter().any(|a| is_device(a)) => {
            out.push(block(
                d,
                MKFS,
                Risk::Critical,
                cmd,
                "creates a file system on a device, erasing it",
            ));
        }
        n if n == "mkfs"
            || n.starts_with("mkfs.")
            || matches!(
                n,
                "mke2fs"
                    | "mkswap"
                    | "newfs"
                    | "mkntfs"
                    | "mkdosfs"
                    | "mkexfatfs"
                    | "mkreiserfs"
                    | "mkudffs"
                    | "mkfatfs"
            ) =>
        {
            if args.iter().any(|a| is_device(a)) || !args.iter().any(|a| !a.starts_with('-')) {
                out.push(block(
                    d,
                    MKFS,
                    Risk::Critical,
                    cmd,
                    "creates a file system on a device, erasing it",
                ));
            } else if !operands
                .iter()
                .all(|t| classify_target(t, cmd.cwd.as_deref(), ctx.workspace).is_work_area())
            {
                out.push(warn(d, MKFS, cmd, "creates a file system"));
            }
        }
        // wipefs is the effect model's (`-a`/`-o` without `-n` wipes; alone it lists).
        "blkdiscard" | "fdisk" | "sfdisk" | "cfdisk" | "gdisk" | "sgdisk" | "parted" | "diskutil" => {
            // sgdisk's read-only options: print, save a backup of the table to a file, verify,
            // show a partition, and `-P` (pretend: nothing is written whatever else is asked).
            let sgdisk_reads = name == "sgdisk"
                && (args.iter().any(|a| a == "-P" || a == "--pretend")
                    || args.iter().filter(|a| a.starts_with('-')).all(|a| {
                        matches!(
                            a.split('=').next().unwrap_or(a),
                            "-p" | "--print"
                                | "-b"
                                | "--backup"
                                | "-v"
                                | "--verify"
                                | "-i"
                                | "--info"
                                | "-O"
                                | "--print-mbr"
                        )
                    }));
            // Listing only when nothing else is asked: `parted -s /dev/sda print mklabel gpt`
            // prints, then writes a new label.
            const WRITES: &[&str] = &[
                "mklabel",
                "mktable",
                "mkpart",
                "mkpartfs",
                "rm",
                "resizepart",
                "resize",
                "name",
                "set",
                "toggle",
                "rescue",
                "move",
                "cp",
                "disk_set",
                "type",
            ];
            let listing = sgdisk_reads
                || (name != "sgdisk"
                    && args
                        .iter()
                        .any(|a| a == "-l" || a == "--list" || a == "list" || a == "-p" || a == "print")
                    && !args.iter().any(|a| WRITES.contains(&a.as_str())));
            if !listing {
                out.push(block(
                    d,
                    PARTITION,
                    Risk::Critical,
                    cmd,
                    "rewrites the partitions or signatures of a disk",
                ));
            }
        }
        n if volume_teardown(n, args).is_some() => {
            let what = volume_teardown(n, args).unwrap_or_default();
            out.push(block(d, VOLUME, Risk::Critical, cmd, what));
        }
        "shred" | "srm" | "wipe" => {
            for t in args.iter().filter(|a| !a.starts_with('-')) {
                if is_device(t) {
                    out.push(block(
                        d,
                        SHRED,
                        Risk::Critical,
                        cmd,
                        format!("shreds the block device {t}"),
                    ));
                    return;
                }
                if classify_target(t, cmd.cwd.as_deref(), ctx.workspace).is_work_area() {
                    out.push(warn(d, SHRED, cmd, format!("shreds `{t}` beyond recovery")));
                } else {
                    out.push(block(
                        d,
                        SHRED,
                        Risk::Critical,
                        cmd,
                        format!("shreds `{t}`, outside the workspace"),
                    ));
                    return;
                }
            }
        }
        _ => {}
    }
}
