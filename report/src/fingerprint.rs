//! Fingerprints: one id per finding that stays the same across runs and rebuilds of unchanged code,
//! so that CI can tell new findings from known ones.
//!
//! Takes a finding's kind and sides, as [`crate::Finding::fingerprint`] names them; gives 16 hex
//! digits. The recipe (version 1, SARIF's
//! `partialFingerprints` key [`SARIF_KEY`]): one line per side, a race's two accesses or a
//! deadlock's blocked operations, each `basename<TAB>function<TAB>line` (basename: the source
//! file's last path component, so the checkout's location does not matter; function: the
//! demangled name; a side the binary does not name is `site N`), the lines sorted (which thread
//! came first does not matter); then one line of the sides' kinds, sorted and joined by spaces
//! (a race's access kinds, `read`, `write`, ...; a deadlock's operations, `lock`, `wait`, ...):
//! kept apart from the lines because of two `x++` lines replay reports whichever ran second as
//! the read. All after the kind (`race` or `deadlock`), joined by newlines, hashed with 64-bit
//! FNV-1a. Never in it: addresses, pids, tids, sequence numbers, columns, trace or replay
//! directories.

/// The SARIF `partialFingerprints` key; the version changes whenever the recipe does.
pub const SARIF_KEY: &str = "ilgenFindingHash/v1";

/// A side's line of the recipe: `basename<TAB>function<TAB>line` when the binary names it (`file`,
/// `function`, `line`), else `site N`, else `uninstrumented`.
pub fn side(named: Option<(&str, &str, u32)>, site: Option<u32>) -> String {
    match (named, site) {
        (Some((file, function, line)), _) => {
            let base = file.rsplit('/').next().unwrap_or(file);
            format!("{base}\t{function}\t{line}")
        }
        (None, Some(site)) => format!("site {site}"),
        (None, None) => "uninstrumented".to_owned(),
    }
}

/// The fingerprint of a finding of `kind` (`race`, `deadlock`, `atomicity`) whose sides are `sides`: each
/// its [`side`] line and its access kind (or operation), in any order.
pub fn hash(kind: &str, sides: Vec<(String, String)>) -> String {
    let (mut lines, mut kinds): (Vec<String>, Vec<String>) = sides.into_iter().unzip();
    lines.sort();
    kinds.sort();
    let text = std::iter::once(kind.to_owned())
        .chain(lines)
        .chain(std::iter::once(kinds.join(" ")))
        .collect::<Vec<_>>()
        .join("\n");
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// 64-bit FNV-1a: defined by its constants, so the same on every platform and Rust version (the
/// standard library's hasher promises neither).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
