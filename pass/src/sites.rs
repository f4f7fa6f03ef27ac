//! Site table emission.
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
const BLOB: &str = "__ilgen_sites";

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

#[cfg(test)]
mod tests {
    use ilgen_trace::sites::SiteTable;

    use crate::options::Filter;
    use crate::testing::{verify, with_module};

    use super::*;

    /// The blob the pass emitted, and the site offset each hook call passes, in call order.
    fn blob_and_offsets(m: LLVMModuleRef) -> (Vec<u8>, Vec<u64>) {
        // SAFETY: live module; the blob is a constant data array.
        unsafe {
            let name = CString::new(BLOB).unwrap();
            let g = LLVMGetNamedGlobal(m, name.as_ptr());
            assert!(!g.is_null());
            let mut len = 0usize;
            let p = LLVMGetAsString(LLVMGetInitializer(g), &mut len);
            let blob = std::slice::from_raw_parts(p as *const u8, len).to_vec();
            let mut offsets = Vec::new();
            for f in ir::functions(m) {
                for b in ir::blocks(f) {
                    for i in ir::instructions(b) {
                        if ir::direct_callee(i).is_none() {
                            continue;
                        }
                        let n = ir::num_call_args(i);
                        let site = ir::operand(i, n - 1);
                        if LLVMIsAConstantExpr(site).is_null() {
                            continue;
                        }
                        assert_eq!(ir::operand(site, 0), g, "site points into the blob");
                        offsets.push(LLVMConstIntGetZExtValue(ir::operand(site, 1)));
                    }
                }
            }
            (blob, offsets)
        }
    }

    #[test]
    fn emitted_blob_parses_and_offsets_name_the_right_sites() {
        let text = r#"
@g = global i32 0
declare i32 @pthread_mutex_lock(ptr)

define void @f() !dbg !5 {
  store i32 1, ptr @g, !dbg !8
  %r = call i32 @pthread_mutex_lock(ptr @g), !dbg !9
  ret void
}

define void @nodebug() {
  store i32 2, ptr @g
  ret void
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "t", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "a.c", directory: "/src")
!2 = !DIFile(filename: "/abs/b.h", directory: "/src")
!3 = !{i32 7, !"Dwarf Version", i32 5}
!4 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 1, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{null}
!8 = !DILocation(line: 3, column: 7, scope: !5)
!9 = !DILocation(line: 4, column: 2, scope: !10)
!10 = !DILexicalBlockFile(scope: !5, file: !2, discriminator: 0)
"#;
        with_module(text, |m| {
            crate::driver::run(m, &Filter::default());
            verify(m);
            let (blob, offsets) = blob_and_offsets(m);
            assert_eq!(blob.len() % UNIT, 0);
            let table = SiteTable::parse(&blob).unwrap();
            assert_eq!(table.len(), 3);
            let sites: Vec<_> = offsets
                .iter()
                .map(|&o| {
                    let s = table.get((o as usize / UNIT) as _).unwrap();
                    (s.file.clone(), s.line, s.column, s.function.clone())
                })
                .collect();
            assert_eq!(
                sites,
                vec![
                    ("/src/a.c".to_owned(), 3, 7, "f".to_owned()),
                    ("/abs/b.h".to_owned(), 4, 2, "f".to_owned()),
                    ("<unknown>".to_owned(), 0, 0, "nodebug".to_owned()),
                ]
            );
        });
    }
}
