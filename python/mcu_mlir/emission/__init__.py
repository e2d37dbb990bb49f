"""C emission: a planned kernel module -> model.c / model.h, and the reports."""
