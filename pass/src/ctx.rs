//! The state every instrumentation step shares for one module.
//!
//! Takes the module's builder, hook declarations, site table and data layout (made by the
//! driver); gives the steps (`instrument`, `printf`, `calls`, `loops`) one value to work through,
//! so that they depend on this module and not on the driver that calls them.

use inkwell::builder::Builder;
use inkwell::module::Module;
use inkwell::targets::TargetData;

use crate::hooks::Hooks;
use crate::sites::Sites;

/// What every step shares for one module.
pub struct Ctx<'m, 'ctx> {
    pub module: &'m Module<'ctx>,
    pub builder: Builder<'ctx>,
    pub hooks: Hooks<'ctx>,
    pub sites: Sites<'ctx>,
    /// The module's data layout, for the store sizes of accessed types.
    pub layout: TargetData,
    pub source: String,
    /// Plain accesses may get the inlined coverage check (`instrument::guard`): the module can
    /// read the table (`hooks::may_read_cover_table`) and `cover=0` did not turn it off.
    pub cover: bool,
}
