//! Site ids: turns the `site` pointer each hook receives into a [`SiteId`], and says whether two
//! sites are one statement.
//!
//! Takes the address of a 16-byte unit in an instrumented module's `ilgen_sites` section (see
//! `ilgen_trace::sites`); gives its id, or [`ilgen_trace::NO_SITE`] for NULL and for a pointer in
//! no known section. In the executable the id is `(site - start of section) / 16`: its bounds come
//! from the C shim `sites.c` (weak `__start_ilgen_sites` and `__stop_ilgen_sites` references) and
//! are read once at initialization, so the hot path stores raw pointers and converts them only
//! when a record is written, with one subtraction and one comparison. Each instrumented shared
//! object registers its own section's bounds from a constructor the pass adds
//! ([`__ilgen_sites_module`], run when the loader maps it, possibly before the runtime starts);
//! once the start-up said how ids are given ([`init`]) each gets a first id: when recording, the
//! next ids past the executable's and the objects before it (listed in `meta.json` through
//! [`modules`]); when replaying, the recorded object's with the same build id, so that a replay
//! that loads it at another address or in another order names its sites as the recording did.
//! [`same_statement`] reads the units of two ids (the schedule gate's, rarely).

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;

use ilgen_trace::meta::Module;
use ilgen_trace::sites::UNIT;
use ilgen_trace::{SiteId, NO_SITE};

extern "C" {
    fn __ilgen_rt_sites_start() -> *const u8;
    fn __ilgen_rt_sites_stop() -> *const u8;
}

static START: AtomicUsize = AtomicUsize::new(0);
/// Bytes of the executable's section (0 when it has none).
static LEN: AtomicUsize = AtomicUsize::new(0);

/// Shared objects a process registers at most; the sites of any beyond have no id.
const MAX_OBJECTS: usize = 256;
/// A slot's `first` before the object has ids (or when a replay found no recorded one).
const NO_FIRST: u32 = u32::MAX;

/// A registered shared object's section and its first id, readable without a lock.
struct Slot {
    start: AtomicUsize,
    stop: AtomicUsize,
    first: AtomicU32,
}

static SLOTS: [Slot; MAX_OBJECTS] = [const {
    Slot {
        start: AtomicUsize::new(0),
        stop: AtomicUsize::new(0),
        first: AtomicU32::new(NO_FIRST),
    }
}; MAX_OBJECTS];
/// Slots in use: each is written before this count covers it.
static USED: AtomicUsize = AtomicUsize::new(0);

/// How shared objects get their ids, as the start-up says.
pub(crate) enum Ids {
    /// The next free ids, and `changed` called after each object given ids once the runtime
    /// runs (it rewrites `meta.json`).
    Record { changed: fn() },
    /// The ids of the recorded objects (`meta.json`'s `modules`).
    Replay(Vec<Module>),
}

/// What registration and id assignment share, under [`STATE`].
struct State {
    /// `None` until [`init`].
    ids: Option<Ids>,
    /// The first id a recording gives next.
    next: u32,
    /// The objects given ids, in that order.
    modules: Vec<Module>,
}

static STATE: Mutex<State> = Mutex::new(State {
    ids: None,
    next: 0,
    modules: Vec::new(),
});

/// The executable's section, from the shim.
fn own_section() -> (usize, usize) {
    // SAFETY: the shim only returns the addresses of (weak) linker symbols.
    unsafe {
        (
            __ilgen_rt_sites_start() as usize,
            __ilgen_rt_sites_stop() as usize,
        )
    }
}

/// Reads the executable's section's bounds from the shim and gives ids to the shared objects
/// registered so far, and from then on to each as it registers; called once by initialization.
pub(crate) fn init(ids: Ids) {
    let (start, stop) = own_section();
    START.store(start, Ordering::Relaxed);
    LEN.store(stop.saturating_sub(start), Ordering::Relaxed);
    let mut state = lock();
    state.next = u32::try_from(stop.saturating_sub(start) / UNIT).unwrap_or(NO_FIRST);
    state.ids = Some(ids);
    for slot in &SLOTS[..USED.load(Ordering::Acquire)] {
        assign(&mut state, slot);
    }
}

fn lock() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Called by the constructor the pass adds to every instrumented module with its linked object's
/// `ilgen_sites` bounds: registers a shared object's section (the executable's own, a repeat and
/// an empty one are ignored).
#[no_mangle]
pub extern "C" fn __ilgen_sites_module(start: *const u8, stop: *const u8) {
    let (start, stop) = (start as usize, stop as usize);
    if start == 0 || stop <= start || start == own_section().0 {
        return;
    }
    let mut state = lock();
    let used = USED.load(Ordering::Acquire);
    if used == MAX_OBJECTS
        || SLOTS[..used]
            .iter()
            .any(|s| s.start.load(Ordering::Relaxed) == start)
    {
        return;
    }
    let slot = &SLOTS[used];
    slot.start.store(start, Ordering::Relaxed);
    slot.stop.store(stop, Ordering::Relaxed);
    USED.store(used + 1, Ordering::Release);
    if assign(&mut state, slot) {
        if let Some(Ids::Record { changed }) = state.ids {
            drop(state);
            changed();
        }
    }
}

/// Gives `slot` its first id if the start-up has said how; whether it got one.
fn assign(state: &mut State, slot: &Slot) -> bool {
    let start = slot.start.load(Ordering::Relaxed);
    let units = (slot.stop.load(Ordering::Relaxed) - start) / UNIT;
    let (Some(ids), Ok(units)) = (&state.ids, u32::try_from(units)) else {
        return false;
    };
    let (path, build_id, load_base) = loaded_object(start);
    let first = match ids {
        Ids::Record { .. } => Some(state.next).filter(|f| f.checked_add(units).is_some()),
        Ids::Replay(recorded) => {
            Module::find(recorded, &build_id, &path, units).map(|m| m.first_site)
        }
    };
    let Some(first) = first else {
        return false;
    };
    state.next = state.next.max(first.saturating_add(units));
    state.modules.push(Module {
        path,
        build_id,
        load_base,
        first_site: first,
        units,
    });
    slot.first.store(first, Ordering::Release);
    true
}

/// The path (absolute), build id and load address of the shared object mapping `addr`.
fn loaded_object(addr: usize) -> (String, String, u64) {
    struct Found {
        addr: u64,
        out: Option<(String, String, u64)>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes a valid entry and our `Found`.
        let (info, found) = unsafe { (&*info, &mut *(data as *mut Found)) };
        // SAFETY: the entry's program headers, mapped while the object is.
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
        let holds = headers.iter().any(|ph| {
            let at = info.dlpi_addr.wrapping_add(ph.p_vaddr);
            ph.p_type == libc::PT_LOAD && (at..at + ph.p_memsz).contains(&found.addr)
        });
        if !holds {
            return 0;
        }
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-ended name owned by the loader.
            unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }
                .to_string_lossy()
                .into_owned()
        };
        let path = std::path::Path::new(&name);
        let path = if path.is_absolute() {
            name.clone()
        } else {
            std::fs::canonicalize(path)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or(name)
        };
        let build_id = crate::exe::build_id_in(info.dlpi_addr, headers);
        found.out = Some((path, build_id, info.dlpi_addr));
        1
    }
    let mut found = Found {
        addr: addr as u64,
        out: None,
    };
    // SAFETY: `visit` only reads the entries and writes `found`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut found as *mut Found as *mut libc::c_void) };
    found.out.unwrap_or_default()
}

/// The shared objects given ids so far, in that order.
pub(crate) fn modules() -> Vec<Module> {
    lock().modules.clone()
}

/// The id of `site`.
#[inline]
pub(crate) fn id(site: usize) -> SiteId {
    let offset = site.wrapping_sub(START.load(Ordering::Relaxed));
    if offset < LEN.load(Ordering::Relaxed) {
        // A section below 64 GiB: the unit index fits.
        return (offset / UNIT) as SiteId;
    }
    object_id(site)
}

/// The id of a site outside the executable's section: in a registered shared object's.
#[cold]
fn object_id(site: usize) -> SiteId {
    if site == 0 {
        return NO_SITE;
    }
    SLOTS[..USED.load(Ordering::Acquire)]
        .iter()
        .find(|s| (s.start.load(Ordering::Relaxed)..s.stop.load(Ordering::Relaxed)).contains(&site))
        .and_then(|s| {
            let first = s.first.load(Ordering::Acquire);
            let unit = (site - s.start.load(Ordering::Relaxed)) / UNIT;
            (first != NO_FIRST).then(|| first + unit as SiteId)
        })
        .unwrap_or(NO_SITE)
}

/// The section holding id `id`: its address, its first id and its units.
fn section_of(id: SiteId) -> Option<(usize, SiteId, usize)> {
    let (start, units) = (start(), section_len() / UNIT);
    if start != 0 && (id as usize) < units {
        return Some((start, 0, units));
    }
    SLOTS[..USED.load(Ordering::Acquire)].iter().find_map(|s| {
        let first = s.first.load(Ordering::Acquire);
        let begin = s.start.load(Ordering::Relaxed);
        let units = (s.stop.load(Ordering::Relaxed) - begin) / UNIT;
        (first != NO_FIRST && id >= first && ((id - first) as usize) < units)
            .then_some((begin, first, units))
    })
}

/// Whether sites `a` and `b` are one statement ([`ilgen_trace::sites::same_statement`]): never
/// for sites of two sections, or an id in none (a schedule is input from outside).
pub(crate) fn same_statement(a: SiteId, b: SiteId) -> bool {
    let Some((start, first, units)) = section_of(a) else {
        return false;
    };
    if section_of(b) != Some((start, first, units)) {
        return false;
    }
    let unit = |i: usize| -> [u8; UNIT] {
        debug_assert!(i < units);
        // SAFETY: unit i < units lies inside the mapped section.
        unsafe { std::ptr::read_unaligned((start + i * UNIT) as *const [u8; UNIT]) }
    };
    ilgen_trace::sites::same_statement(unit, a - first, b - first)
}

/// The executable's section's length in bytes (0 when it has none).
pub(crate) fn section_len() -> usize {
    LEN.load(Ordering::Relaxed)
}

/// The address of the executable's section (0 when it has none).
pub(crate) fn start() -> usize {
    START.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ilgen_trace::sites::{Frame, SiteTableBuilder};
    use std::sync::atomic::AtomicUsize;

    /// A section of `lines`' sites in 16-aligned memory that lives as long as the process.
    fn section(lines: &[u32]) -> (usize, usize) {
        let mut b = SiteTableBuilder::new();
        for &line in lines {
            b.add(&Frame::new("lib.c", line, 1, "f"), &[], 0);
        }
        let bytes = b.finish();
        let units: &'static mut [u128] = vec![0u128; bytes.len() / UNIT].leak();
        // SAFETY: `units` has exactly `bytes.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                units.as_mut_ptr() as *mut u8,
                bytes.len(),
            )
        };
        let start = units.as_ptr() as usize;
        (start, start + bytes.len())
    }

    static CHANGED: AtomicUsize = AtomicUsize::new(0);

    fn changed() {
        CHANGED.fetch_add(1, Ordering::Relaxed);
    }

    #[test]
    fn registered_objects_get_ids_past_the_executable_s_in_order_of_ids() {
        let register = |(start, stop): (usize, usize)| {
            __ilgen_sites_module(start as *const u8, stop as *const u8)
        };
        let a = section(&[7, 7, 9]);
        let site = |(start, _): (usize, usize), i: usize| start + (1 + i) * UNIT;
        register(a);
        assert_eq!(
            id(site(a, 0)),
            NO_SITE,
            "no ids before the start-up says how"
        );
        // The test binary has no section of its own: the first object's ids start at 0.
        init(Ids::Record { changed });
        assert_eq!((id(site(a, 0)), id(site(a, 2))), (1, 3));
        assert_eq!(
            CHANGED.load(Ordering::Relaxed),
            0,
            "given at the start: meta.json is new"
        );
        let b = section(&[7]);
        register(b);
        register(a);
        assert_eq!(
            CHANGED.load(Ordering::Relaxed),
            1,
            "b only; a again is ignored"
        );
        let a_units = ((a.1 - a.0) / UNIT) as SiteId;
        assert_eq!(id(site(b, 0)), a_units + 1);
        assert_eq!(id(0), NO_SITE);
        assert_eq!(id(b.1), NO_SITE, "past every section");
        assert!(same_statement(1, 2), "two sites of line 7 in a");
        assert!(!same_statement(1, 3), "lines 7 and 9");
        assert!(!same_statement(1, a_units + 1), "line 7 of a and of b");
        assert!(!same_statement(1, 1000), "an id in no section");
        let firsts: Vec<_> = modules().iter().map(|m| (m.first_site, m.units)).collect();
        let b_units = ((b.1 - b.0) / UNIT) as SiteId;
        assert_eq!(firsts, vec![(0, a_units), (a_units, b_units)]);
    }
}
