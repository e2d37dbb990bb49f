"""FX -> TOSA lowerings, one module per op family; tables.py collects them into the tables the graph
walk (frontend/lowering/fx_to_tosa.py) dispatches on. Importing the package itself loads no family (and
so no torch): the `.tflite` frontend uses only its TOSA builder."""
