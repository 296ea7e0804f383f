sonde_unit_test(test_vm_bus vm/test_bus.c LIBS sonde_vm)
