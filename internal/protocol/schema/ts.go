package schema

import (
	"bytes"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"

	"github.com/task-x/task-x-runtime/internal/protocol"
)

// TypeScript returns TypeScript declarations of the protocol: one
// declaration per Go type, named as the Go type, events as discriminated
// unions on "type", and method maps (ClientRequests, ClientNotifications,
// ServerRequests, ServerNotifications) that give each method's params and
// result. The file holds declarations only, for `import type`.
func TypeScript(src fs.FS) ([]byte, error) {
	m, err := newModel(src)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// The task-x runtime protocol, version %d (protocol.md and addendum.md).\n", protocol.Version)
	fmt.Fprintf(&b, "// Code generated from internal/protocol by `%s`. DO NOT EDIT.\n\n", RegenerateCommand)
	fmt.Fprintf(&b, "/** The protocolVersion of initialize. */\nexport type ProtocolVersion = %d;\n", protocol.Version)
	for _, name := range m.order {
		b.WriteByte('\n')
		m.tsDecl(&b, name)
	}
	for _, dir := range []struct {
		name string
		d    protocol.Direction
		doc  string
	}{
		{"ClientRequests", protocol.ClientRequest, "Requests the client sends; the runtime answers with result."},
		{"ClientNotifications", protocol.ClientNotification, "Notifications the client sends."},
		{"ServerRequests", protocol.ServerRequest, "Requests the runtime sends; the client answers with result."},
		{"ServerNotifications", protocol.ServerNotification, "Notifications the runtime sends."},
	} {
		fmt.Fprintf(&b, "\n/** %s */\nexport interface %s {\n", dir.doc, dir.name)
		for _, meth := range protocol.Methods {
			if meth.Direction != dir.d {
				continue
			}
			params := "void"
			if meth.Params != nil {
				params = m.tsType(meth.Params)
			}
			fmt.Fprintf(&b, "  %s: { params: %s", strconv.Quote(meth.Name), params)
			if dir.d == protocol.ClientRequest || dir.d == protocol.ServerRequest {
				result := "null"
				if meth.Result != nil {
					result = m.tsType(meth.Result)
				}
				fmt.Fprintf(&b, "; result: %s", result)
			}
			b.WriteString(" };\n")
		}
		b.WriteString("}\n")
	}
	b.WriteString("\n/** The name of a method of the protocol. */\n" +
		"export type MethodName = keyof ClientRequests | keyof ClientNotifications | keyof ServerRequests | keyof ServerNotifications;\n")
	return b.Bytes(), nil
}

func tsDoc(b *bytes.Buffer, indent, doc string) {
	if doc == "" {
		return
	}
	doc = strings.ReplaceAll(doc, "*/", "*\\/")
	lines := strings.Split(doc, "\n")
	if len(lines) == 1 {
		fmt.Fprintf(b, "%s/** %s */\n", indent, doc)
		return
	}
	fmt.Fprintf(b, "%s/**\n", indent)
	for _, l := range lines {
		fmt.Fprintf(b, "%s *%s\n", indent, strings.TrimRight(" "+l, " "))
	}
	fmt.Fprintf(b, "%s */\n", indent)
}

func (m *model) tsDecl(b *bytes.Buffer, name string) {
	t := m.named[name]
	tsDoc(b, "", m.docs.types[name])
	switch {
	case t == idType:
		fmt.Fprintf(b, "export type %s = string | number;\n", name)
	case protocol.Unions[t] != nil:
		var names []string
		for _, u := range protocol.Unions[t] {
			names = append(names, u.Name())
		}
		fmt.Fprintf(b, "export type %s =\n  | %s;\n", name, strings.Join(names, "\n  | "))
	case t.Kind() == reflect.Struct:
		fmt.Fprintf(b, "export interface %s {\n", name)
		if typ := eventType(t); typ != "" {
			fmt.Fprintf(b, "  type: %s;\n", strconv.Quote(typ))
		}
		for _, f := range fields(t) {
			tsDoc(b, "  ", m.docs.fields[name][f.goName])
			ft := f.typ
			if f.omitempty && ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			opt := ""
			if f.omitempty {
				opt = "?"
			}
			fmt.Fprintf(b, "  %s%s: %s;\n", tsKey(f.name), opt, m.tsType(ft))
		}
		b.WriteString("}\n")
	default:
		fmt.Fprintf(b, "export type %s = %s;\n", name, m.tsShape(t))
	}
}

func tsKey(k string) string {
	for i, r := range k {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return strconv.Quote(k)
		}
	}
	return k
}

// tsType is the TypeScript type of a use of t.
func (m *model) tsType(t reflect.Type) string {
	switch {
	case t == rawMessage:
		return "unknown"
	case t == timeType:
		return "string"
	case t.Kind() == reflect.Pointer:
		return m.tsType(t.Elem()) + " | null"
	case ours(t):
		return t.Name()
	}
	return m.tsShape(t)
}

func (m *model) tsShape(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		if vals := m.docs.enums[t.Name()]; ours(t) && len(vals) > 0 {
			q := make([]string, len(vals))
			for i, v := range vals {
				q[i] = strconv.Quote(v)
			}
			return strings.Join(q, " | ")
		}
		return "string"
	case reflect.Slice, reflect.Array:
		el := m.tsType(t.Elem())
		if strings.Contains(el, " ") {
			el = "(" + el + ")"
		}
		return el + "[]"
	case reflect.Map:
		return "{ [key: string]: " + m.tsType(t.Elem()) + " }"
	case reflect.Interface:
		return "unknown"
	}
	panic(fmt.Sprintf("schema: no TypeScript form for %v", t))
}
