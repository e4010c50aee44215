//! The evaluation context of FEP 2.3.1, `{"test_case": ..., "output": ...}`, that JSONPaths
//! select from.

use serde_json::{Map, Value};

/// The evaluation context of FEP 2.3.1: `{"test_case": test_case, "output": output}`. A run
/// builds one and lends each test case and output to it in turn (see [`Context::with`]).
#[derive(Debug)]
pub struct Context(Value);

impl Context {
    /// The context of `test_case` and `output`.
    pub fn new(test_case: Value, output: Value) -> Self {
        let mut object = Map::with_capacity(2);
        object.insert("test_case".to_string(), test_case);
        object.insert("output".to_string(), output);
        Context(Value::Object(object))
    }

    /// The context as JSON, what JSONPaths select from.
    pub fn value(&self) -> &Value {
        &self.0
    }

    /// Run `evaluate` on the context of `test_case` and `output`, which are moved in for the
    /// call and back out after it: no context is built per test case and nothing is cloned.
    pub fn with<T>(
        &mut self,
        test_case: &mut Value,
        output: &mut Value,
        evaluate: impl FnOnce(&Value) -> T,
    ) -> T {
        self.swap(test_case, output);
        let result = evaluate(&self.0);
        self.swap(test_case, output);
        result
    }

    fn swap(&mut self, test_case: &mut Value, output: &mut Value) {
        if let Value::Object(object) = &mut self.0 {
            for (key, value) in object.iter_mut() {
                std::mem::swap(
                    value,
                    if key == "test_case" {
                        &mut *test_case
                    } else {
                        &mut *output
                    },
                );
            }
        }
    }
}
