//! Site table emission (its end-to-end test, through the whole pass, is in `driver.rs`).
//!
//! Takes, for every instrumented instruction, its source location (from the instruction's debug
//! location: the first user frame of its inlined-at chain, with the library frames inlined there)
//! and its function's symbol name; gives the `site` argument of the hook call (a
//! constant address inside this module's site blob) and, at the end, the blob itself: ONE private
//! constant `[N x i8]` global in section `ilgen_sites`, 16-aligned, kept by `llvm.compiler.used`,
//! laid out by [`ilgen_trace::sites::SiteTableBuilder`], and a constructor that passes the bounds
//! of the linked object's section to the runtime (`abi::SITES_MODULE`). The runtime turns a site
//! address in the executable into a global id by subtracting the section start; the constructor
//! is what gives a shared object's sites their ids.
//!
//! The blob's size is known only when the module is done, so hook calls first point into a
//! placeholder declaration, which [`Sites::finish`] replaces with the real global.

use ilgen_trace::abi;
use ilgen_trace::sites::{
    is_user_file, Frame, SiteTableBuilder, FLAG_CALL, FLAG_DECIDES, FLAG_PREDICATE, FLAG_SPIN,
    SECTION, UNIT,
};
use inkwell::module::{Linkage, Module};
use inkwell::types::IntType;
use std::collections::HashSet;

use inkwell::values::{GlobalValue, InstructionValue, PointerValue};

use crate::decides;
use crate::glue::{self, DebugFrame};

/// The site of instruction `inst` of `function` (its symbol): the first frame of the debug
/// location's inlined-at chain that is in the user's code ([`is_user_file`]), or the innermost
/// frame when none is; the library frames inlined at it from its call inward; and the frames it
/// is inlined into, innermost first. Without a debug location: file `<unknown>`, zeros and
/// `function`.
fn site_of(inst: InstructionValue<'_>, function: &str) -> (Frame, Vec<Frame>, Vec<Frame>) {
    let mut chain: Vec<Frame> = glue::debug_frames(inst)
        .into_iter()
        .map(|d| frame(d, function))
        .collect();
    if chain.is_empty() {
        return (
            frame(DebugFrame::default(), function),
            Vec::new(),
            Vec::new(),
        );
    }
    // Library code compiled out of line (a header function at -O0) has no user frame: its own.
    let at = chain
        .iter()
        .position(|f| is_user_file(&f.file))
        .unwrap_or(0);
    let callers = chain.split_off(at + 1);
    let site = chain.pop().expect("frame `at`");
    chain.reverse();
    (site, chain, callers)
}

/// A frame with the directory prefixed to a relative file name; `function` when the location
/// names no subprogram.
fn frame(d: DebugFrame, function: &str) -> Frame {
    let file = if d.file.is_empty() {
        "<unknown>".to_owned()
    } else if d.file.starts_with('/') || d.dir.is_empty() {
        d.file
    } else {
        format!("{}/{}", d.dir.trim_end_matches('/'), d.file)
    };
    let symbol = if d.function.is_empty() {
        function.to_owned()
    } else {
        d.function
    };
    Frame::new(file, d.line, d.column, symbol)
}

/// One module's sites.
pub struct Sites<'ctx> {
    builder: SiteTableBuilder,
    placeholder: GlobalValue<'ctx>,
    i8_ty: IntType<'ctx>,
    i64_ty: IntType<'ctx>,
    /// The loads (and stores) of the function being instrumented that decide a waiting loop's
    /// branch or a sync guard, and those of them that decide a spin.
    predicates: HashSet<InstructionValue<'ctx>>,
    spins: HashSet<InstructionValue<'ctx>>,
    /// Its loads that decide a branch choosing what it returns.
    returned: HashSet<InstructionValue<'ctx>>,
    /// Its stores that carry the address-deciding flag of their segment's earlier read.
    carried: HashSet<InstructionValue<'ctx>>,
}

const PLACEHOLDER: &str = "__ilgen_sites.placeholder";
pub const BLOB: &str = "__ilgen_sites";

impl<'ctx> Sites<'ctx> {
    pub fn new(module: &Module<'ctx>) -> Sites<'ctx> {
        let ctx = module.get_context();
        let i8_ty = ctx.i8_type();
        Sites {
            builder: SiteTableBuilder::new(),
            placeholder: module.add_global(i8_ty, None, PLACEHOLDER),
            i8_ty,
            i64_ty: ctx.i64_type(),
            predicates: HashSet::new(),
            spins: HashSet::new(),
            returned: HashSet::new(),
            carried: HashSet::new(),
        }
    }

    /// Adds a site; returns the `site` argument for its hook call.
    fn add(
        &mut self,
        at: &Frame,
        inlined: &[Frame],
        callers: &[Frame],
        flags: u8,
    ) -> PointerValue<'ctx> {
        let index = self.builder.add_inlined_into(at, inlined, callers, flags);
        let offset = SiteTableBuilder::byte_offset(index) as u64;
        let idx = [self.i64_ty.const_int(offset, false)];
        // SAFETY: an inbounds i8 GEP on a global: no access happens, and the offset is within
        // the blob that replaces the placeholder.
        unsafe {
            self.placeholder
                .as_pointer_value()
                .const_in_bounds_gep(self.i8_ty, &idx)
        }
    }

    /// Adds a site for instruction `inst` of `function` ([`site_of`]), flagged when it is a
    /// load that decides an address ([`decides::decides`]) or what its function returns, or a
    /// waiting loop's branch (`predicates.rs`).
    pub fn add_for(&mut self, inst: InstructionValue<'ctx>, function: &str) -> PointerValue<'ctx> {
        let (at, inlined, callers) = site_of(inst, function);
        let mut flags = 0;
        if decides::decides(inst) || self.returned.contains(&inst) || self.carried.contains(&inst) {
            flags |= FLAG_DECIDES;
        }
        if self.predicates.contains(&inst) {
            flags |= FLAG_PREDICATE;
        }
        if self.spins.contains(&inst) {
            flags |= FLAG_SPIN;
        }
        self.add(&at, &inlined, &callers, flags)
    }

    /// Adds the site of marker call `inst` of `function`, flagged [`FLAG_CALL`] when it is a call
    /// marker (`call_markers`).
    pub fn add_marker(
        &mut self,
        inst: InstructionValue<'ctx>,
        function: &str,
        call: bool,
    ) -> PointerValue<'ctx> {
        let (at, inlined, callers) = site_of(inst, function);
        let flags = if call { FLAG_CALL } else { 0 };
        self.add(&at, &inlined, &callers, flags)
    }

    /// Called before a function's instructions get their sites, with its predicate loads and
    /// stores, those of them that decide a spin, and its loads that decide what it returns
    /// (`predicates.rs`, found before any hook changed its blocks).
    pub fn enter(
        &mut self,
        predicates: HashSet<InstructionValue<'ctx>>,
        spins: HashSet<InstructionValue<'ctx>>,
        returned: HashSet<InstructionValue<'ctx>>,
    ) {
        self.predicates = predicates;
        self.spins = spins;
        self.returned = returned;
        self.carried.clear();
    }

    /// A store whose segment read its pointer first (`redundant::Plan::read_first`) decides
    /// what that read decided: the recorder keeps the store's write alone, with the store's
    /// site, so the trace shows the read only through it. Called before either gets its site.
    pub fn carry_read(&mut self, load: InstructionValue<'ctx>, store: InstructionValue<'ctx>) {
        if decides::decides(load) || self.returned.contains(&load) {
            self.carried.insert(store);
        }
        if self.predicates.contains(&load) {
            self.predicates.insert(store);
        }
        if self.spins.contains(&load) {
            self.spins.insert(store);
        }
    }

    pub fn len(&self) -> usize {
        self.builder.len()
    }

    /// Emits the blob (nothing when the module has no sites) and retires the placeholder.
    pub fn finish(self, module: &Module<'ctx>) {
        if !self.builder.is_empty() {
            let bytes = self.builder.finish();
            debug_assert_eq!(bytes.len() % UNIT, 0);
            let init = module.get_context().const_string(&bytes, false);
            let blob = module.add_global(init.get_type(), None, BLOB);
            blob.set_initializer(&init);
            blob.set_constant(true);
            blob.set_linkage(Linkage::Private);
            blob.set_section(Some(SECTION));
            // Every blob is a whole number of 16-byte units and 16-aligned, so the linker packs the
            // blobs of all modules without padding and site ids are (address - start) / 16.
            blob.set_alignment(UNIT as u32);
            self.placeholder
                .as_pointer_value()
                .replace_all_uses_with(blob.as_pointer_value());
            // Nothing references the blob except through the section: keep it from being dropped.
            glue::append_to_compiler_used(module, blob);
            // A shared object's section is not the executable's: its bounds reach the runtime
            // from a constructor (the executable's own call is ignored).
            glue::add_section_ctor(module, abi::SITES_MODULE, SECTION);
        }
        // SAFETY: the placeholder has no uses left (none were made, or all moved to the blob),
        // and `self`, the only holder of its handle, is consumed.
        unsafe { self.placeholder.delete() };
    }
}
