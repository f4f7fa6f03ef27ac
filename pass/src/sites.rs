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

use std::ffi::CString;

use ilgen_trace::sites::{SiteTableBuilder, SECTION, UNIT};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::LLVMLinkage;

use crate::glue;
use crate::ir;

/// A source location; file `<unknown>` and zeros without debug info.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

/// The debug location of instruction `inst`, with the directory prefixed to a relative file name.
pub fn loc_of(inst: LLVMValueRef) -> Loc {
    // SAFETY: `inst` is a live instruction; the C API returns null/0 when it has no location.
    unsafe {
        let mut len = 0u32;
        let file = LLVMGetDebugLocFilename(inst, &mut len);
        if file.is_null() || len == 0 {
            return Loc {
                file: "<unknown>".to_owned(),
                line: 0,
                column: 0,
            };
        }
        let file = ir::bytes_to_string(file, len as usize);
        let mut dlen = 0u32;
        let dir = LLVMGetDebugLocDirectory(inst, &mut dlen);
        let dir = ir::bytes_to_string(dir, dlen as usize);
        let file = if file.starts_with('/') || dir.is_empty() {
            file
        } else {
            format!("{}/{}", dir.trim_end_matches('/'), file)
        };
        Loc {
            file,
            line: LLVMGetDebugLocLine(inst),
            column: LLVMGetDebugLocColumn(inst),
        }
    }
}

/// One module's sites.
pub struct Sites {
    module: LLVMModuleRef,
    builder: SiteTableBuilder,
    placeholder: LLVMValueRef,
    i8_ty: LLVMTypeRef,
    i64_ty: LLVMTypeRef,
}

const PLACEHOLDER: &str = "__ilgen_sites.placeholder";
pub const BLOB: &str = "__ilgen_sites";

impl Sites {
    pub fn new(module: LLVMModuleRef) -> Sites {
        // SAFETY: live module; names are NUL-free literals.
        unsafe {
            let ctx = LLVMGetModuleContext(module);
            let i8_ty = LLVMInt8TypeInContext(ctx);
            let i64_ty = LLVMInt64TypeInContext(ctx);
            let name = CString::new(PLACEHOLDER).unwrap();
            let placeholder = LLVMAddGlobal(module, i8_ty, name.as_ptr());
            Sites {
                module,
                builder: SiteTableBuilder::new(),
                placeholder,
                i8_ty,
                i64_ty,
            }
        }
    }

    /// Adds a site at `loc` in `function`; returns the `site` argument for its hook call.
    pub fn add(&mut self, loc: &Loc, function: &str) -> LLVMValueRef {
        let index = self.builder.add(&loc.file, loc.line, loc.column, function);
        let offset = SiteTableBuilder::byte_offset(index) as u64;
        // SAFETY: constant GEP on a live global.
        unsafe {
            let mut idx = [LLVMConstInt(self.i64_ty, offset, 0)];
            LLVMConstInBoundsGEP2(self.i8_ty, self.placeholder, idx.as_mut_ptr(), 1)
        }
    }

    /// Adds a site for instruction `inst` of `function`.
    pub fn add_for(&mut self, inst: LLVMValueRef, function: &str) -> LLVMValueRef {
        let loc = loc_of(inst);
        self.add(&loc, function)
    }

    pub fn len(&self) -> usize {
        self.builder.len()
    }

    /// Emits the blob (nothing when the module has no sites) and retires the placeholder.
    pub fn finish(self) {
        // SAFETY: live module and globals; the placeholder is replaced before it is deleted.
        unsafe {
            if self.builder.is_empty() {
                LLVMDeleteGlobal(self.placeholder);
                return;
            }
            let bytes = self.builder.finish();
            debug_assert_eq!(bytes.len() % UNIT, 0);
            let ctx = LLVMGetModuleContext(self.module);
            let init = LLVMConstStringInContext2(ctx, bytes.as_ptr() as *const _, bytes.len(), 1);
            let name = CString::new(BLOB).unwrap();
            let blob = LLVMAddGlobal(self.module, LLVMTypeOf(init), name.as_ptr());
            LLVMSetInitializer(blob, init);
            LLVMSetGlobalConstant(blob, 1);
            LLVMSetLinkage(blob, LLVMLinkage::LLVMPrivateLinkage);
            let section = CString::new(SECTION).unwrap();
            LLVMSetSection(blob, section.as_ptr());
            // Every blob is a whole number of 16-byte units and 16-aligned, so the linker packs the
            // blobs of all modules without padding and site ids are (address - start) / 16.
            LLVMSetAlignment(blob, UNIT as u32);
            LLVMReplaceAllUsesWith(self.placeholder, blob);
            LLVMDeleteGlobal(self.placeholder);
            // Nothing references the blob except through the section: keep it from being dropped.
            glue::append_to_compiler_used(self.module, blob);
        }
    }
}
