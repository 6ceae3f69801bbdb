package ubus

import "fmt"

// checkArgs checks the declared arguments that are present against their
// types and returns what is wrong, or "". Integers of any width are
// accepted for an integer argument, as JSON gives no width; a double
// argument takes integers too. Undeclared arguments pass through.
func checkArgs(sig []Arg, args Table) string {
	for _, a := range sig {
		v, ok := args.Get(a.Name)
		if !ok || v == nil {
			continue
		}
		if !typeFits(a.Type, v) {
			return fmt.Sprintf("%s: must be %s, got %s — pass e.g. {%q: %s}",
				a.Name, article(a.Type), valueKind(v), a.Name, example(a.Type))
		}
	}
	return ""
}

func typeFits(t BlobmsgType, v any) bool {
	switch v.(type) {
	case string:
		return t == TypeString
	case bool:
		return t == TypeBool
	case int16, int32, int64:
		return t == TypeInt16 || t == TypeInt32 || t == TypeInt64 || t == TypeDouble
	case float64:
		return t == TypeDouble
	case Table:
		return t == TypeTable
	case Array:
		return t == TypeArray
	}
	return t == TypeUnspec
}

func valueKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int16, int32, int64:
		return "an integer"
	case float64:
		return "a number with a fraction"
	case Table:
		return "an object"
	case Array:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

func article(t BlobmsgType) string {
	switch t {
	case TypeString:
		return "a string"
	case TypeBool:
		return "a boolean"
	case TypeInt16, TypeInt32, TypeInt64:
		return "an integer"
	case TypeDouble:
		return "a number"
	case TypeTable:
		return "an object"
	case TypeArray:
		return "an array"
	}
	return "any value"
}

func example(t BlobmsgType) string {
	switch t {
	case TypeString:
		return `"text"`
	case TypeBool:
		return "true"
	case TypeInt16, TypeInt32, TypeInt64:
		return "10"
	case TypeDouble:
		return "1.5"
	case TypeTable:
		return "{}"
	case TypeArray:
		return "[]"
	}
	return "null"
}
