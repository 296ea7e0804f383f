/* Execution of the ARMv7E-M DSP extension and of the single-precision floating
 * point extension (FPv4-SP on Cortex-M4F, the FPv5-SP subset on Cortex-M33).
 * Owner: exec_dsp.c, exec_fp.c (and fp_*.c helpers).
 *
 * Contract with the decoder (exec*.c):
 *   - `insn` is a 32-bit Thumb-2 encoding, (hw1 << 16) | hw2.
 *   - The call happens after the condition passed; IT blocks are the caller's
 *     (IT state advance, condition check).
 *   - vm->cpu.r[15] holds the address of the instruction itself. These
 *     functions never write r15 (no FP/DSP instruction can target the PC: such
 *     encodings are UNPREDICTABLE and treated as undefined).
 *   - Return value: the instruction's cycle count (>= 1, Cortex-M4 TRM tables,
 *     bus wait states not included: the caller takes them with
 *     vm_bus_take_stalls), or
 *       VM_EXT_UNDEFINED: not an instruction of this extension on this core;
 *                         the caller raises UsageFault UNDEFINSTR;
 *       VM_EXT_FAULTED:   the instruction faulted and vm_fault() was already
 *                         called (NOCP when the FPU is absent or disabled in
 *                         CPACR, via vm_fp_prepare(); PRECISERR or UNALIGNED
 *                         in an FP load/store). No architectural state was
 *                         changed except what the fault itself does.
 *   - vm_exec_dsp is called for the DSP-extension encodings only when
 *     vm->has_dsp (parallel add/sub, QADD family, SEL, xXTB16/xXTAB16,
 *     SSAT16/USAT16, PKHBT/PKHTB, the halfword and dual multiplies, SMMLA/S/UL,
 *     SMLALxy, SMLALD/SMLSLD, UMAAL, USAD8/USADA8).
 *   - vm_exec_fp is called for every coprocessor-space encoding with coproc 10
 *     or 11 (on any core: without an FPU it raises NOCP itself).
 *   - FP loads/stores go through vm_bus_read/vm_bus_write and call
 *     vm->hooks.transfer when vm->hooked. */
#ifndef SONDE_VM_EXEC_EXT_H
#define SONDE_VM_EXEC_EXT_H

#include <stdint.h>

struct sonde_vm;

enum { VM_EXT_UNDEFINED = -1, VM_EXT_FAULTED = -2 };

int vm_exec_dsp(struct sonde_vm *vm, uint32_t insn); /* insn = (hw1 << 16) | hw2 */
int vm_exec_fp(struct sonde_vm *vm, uint32_t insn);

#endif
