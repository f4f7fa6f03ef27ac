//! The running executable as its own program headers describe it: where it was loaded and its
//! ELF build id.
//!
//! Takes nothing (the auxiliary vector's `AT_PHDR`/`AT_PHNUM`); gives [`load_base`] and
//! [`build_id`] ([`build_id_in`] reads a shared object's the same way). Both read only memory the loader mapped, never the file: a big executable costs
//! nothing at start-up, and the id is the one of the code that runs, even if the file on disk was
//! replaced since.

/// The executable's program headers, as mapped by the loader (empty if the vector has none).
fn program_headers() -> &'static [libc::Elf64_Phdr] {
    // SAFETY: the auxiliary vector points at the executable's program headers, mapped for the
    // whole life of the process, and gives their number.
    unsafe {
        let phdr = libc::getauxval(libc::AT_PHDR) as *const libc::Elf64_Phdr;
        let phnum = libc::getauxval(libc::AT_PHNUM) as usize;
        if phdr.is_null() {
            return &[];
        }
        std::slice::from_raw_parts(phdr, phnum)
    }
}

/// Load address of the executable: where its program headers are mapped minus where its own
/// `PT_PHDR` entry says they are (0 for a position-dependent executable).
pub(crate) fn load_base() -> u64 {
    let headers = program_headers();
    headers
        .iter()
        .find(|ph| ph.p_type == libc::PT_PHDR)
        .map_or(0, |ph| (headers.as_ptr() as u64).wrapping_sub(ph.p_vaddr))
}

/// The executable's ELF build id (lowercase hex), found in its mapped `PT_NOTE` segments. Empty
/// when it has none (linked with `--build-id=none`, or by a linker not told to add one).
pub(crate) fn build_id() -> String {
    build_id_in(load_base(), program_headers())
}

/// The ELF build id (lowercase hex, empty when it has none) of the object loaded at `base` whose
/// mapped program headers are `headers` (the executable's, or a shared object's as
/// `dl_iterate_phdr` gives them).
pub(crate) fn build_id_in(base: u64, headers: &[libc::Elf64_Phdr]) -> String {
    const NT_GNU_BUILD_ID: usize = 3;
    for ph in headers.iter().filter(|ph| ph.p_type == libc::PT_NOTE) {
        // SAFETY: a PT_NOTE segment lies inside a loaded segment, mapped at load base + its
        // virtual address.
        let notes = unsafe {
            std::slice::from_raw_parts(
                base.wrapping_add(ph.p_vaddr) as *const u8,
                ph.p_memsz as usize,
            )
        };
        let word = |at: usize| {
            notes
                .get(at..at + 4)
                .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize)
        };
        let mut at = 0;
        // Each note: name size, descriptor size, type, then name and descriptor, both padded to
        // 4 bytes.
        while let (Some(namesz), Some(descsz), Some(kind)) = (word(at), word(at + 4), word(at + 8))
        {
            let name = at + 12;
            let desc = name + namesz.div_ceil(4) * 4;
            if kind == NT_GNU_BUILD_ID && notes.get(name..name + namesz) == Some(b"GNU\0") {
                if let Some(id) = notes.get(desc..desc + descsz) {
                    return id.iter().map(|b| format!("{b:02x}")).collect();
                }
            }
            at = desc + descsz.div_ceil(4) * 4;
        }
    }
    String::new()
}
