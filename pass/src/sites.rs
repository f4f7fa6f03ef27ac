//! Site table emission (its end-to-end test, through the whole pass, is in `driver.rs`).
//!
//! Takes, for every instrumented instruction, its source location (from the instruction's debug
//! location) and its function's symbol name; gives the `site` argument of the hook call (a
//! constant address inside this module's site blob) and, at the end, the blob itself: ONE private
//! constant `[N x i8]` global in section `ilgen_sites`, 16-aligned, kept by `llvm.compiler.used`,
//! laid out by [`ilgen_trace::sites::SiteTableBuilder`]. The runtime turns a site address into a
//! global id by subtracting the section start, so nothing is registered at start-up.
//!
//! The blob's size is known only when the module is done, so hook calls first point into a
//! placeholder declaration, which [`Sites::finish`] replaces with the real global.

use ilgen_trace::sites::{SiteTableBuilder, SECTION, UNIT};
use inkwell::module::{Linkage, Module};
use inkwell::types::IntType;
use inkwell::values::{AsValueRef, GlobalValue, InstructionValue, PointerValue};
use llvm_sys::core::{LLVMGetDebugLocDirectory, LLVMGetDebugLocFilename};

use crate::ir;
use crate::{decides, glue};

/// A source location; file `<unknown>` and zeros without debug info.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

/// The debug location of instruction `inst`, with the directory prefixed to a relative file name.
pub fn loc_of(inst: InstructionValue<'_>) -> Loc {
    let unknown = Loc {
        file: "<unknown>".to_owned(),
        line: 0,
        column: 0,
    };
    let Some(dbg) = inst.get_debug_location() else {
        return unknown;
    };
    // inkwell reads a location's line and column but not its scope's file and directory.
    // SAFETY: `inst` is a live instruction with a location; the C API returns null/0 for a
    // missing file and the strings are valid for the lengths it gives.
    let (file, dir) = unsafe {
        let (mut len, mut dlen) = (0u32, 0u32);
        let file = LLVMGetDebugLocFilename(inst.as_value_ref(), &mut len);
        if file.is_null() || len == 0 {
            return unknown;
        }
        let dir = LLVMGetDebugLocDirectory(inst.as_value_ref(), &mut dlen);
        (
            ir::bytes_to_string(file, len as usize),
            ir::bytes_to_string(dir, dlen as usize),
        )
    };
    let file = if file.starts_with('/') || dir.is_empty() {
        file
    } else {
        format!("{}/{}", dir.trim_end_matches('/'), file)
    };
    Loc {
        file,
        line: dbg.get_line(),
        column: dbg.get_column(),
    }
}

/// One module's sites.
pub struct Sites<'ctx> {
    builder: SiteTableBuilder,
    placeholder: GlobalValue<'ctx>,
    i8_ty: IntType<'ctx>,
    i64_ty: IntType<'ctx>,
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
        }
    }

    /// Adds a site at `loc` in `function`; returns the `site` argument for its hook call.
    fn add(&mut self, loc: &Loc, function: &str, decides: bool) -> PointerValue<'ctx> {
        let index = self
            .builder
            .add(&loc.file, loc.line, loc.column, function, decides);
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

    /// Adds a site for instruction `inst` of `function`, flagged when it is a load that
    /// decides an address ([`decides::decides`]).
    pub fn add_for(&mut self, inst: InstructionValue<'ctx>, function: &str) -> PointerValue<'ctx> {
        let loc = loc_of(inst);
        self.add(&loc, function, decides::decides(inst))
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
        }
        // SAFETY: the placeholder has no uses left (none were made, or all moved to the blob),
        // and `self`, the only holder of its handle, is consumed.
        unsafe { self.placeholder.delete() };
    }
}
