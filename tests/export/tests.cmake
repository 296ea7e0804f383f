# src/export: the timeline writer (Perfetto protobuf, Chrome JSON).
sonde_unit_test(test_export export/test_export.c LIBS sonde_export)
