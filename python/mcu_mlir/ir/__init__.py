"""What every stage reads and writes in the IR: dense resources, element types, constants,
locations and the project's discardable attributes. Depends on the MLIR bindings only."""
