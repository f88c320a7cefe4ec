/// Introspection XML (D-Bus Specification, "Introspection Data Format"), so `busctl introspect`,
/// `gdbus introspect` and d-feet show the API.
enum DBusIntrospection {
    static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    static let standardInterfaces = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="xml_data" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId"><arg name="machine_uuid" type="s" direction="out"/></method>
          </interface>

        """

    static let propertiesInterface = """
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get"><arg name="interface_name" type="s" direction="in"/>\
        <arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
            <method name="GetAll"><arg name="interface_name" type="s" direction="in"/><arg name="props" type="a{sv}" direction="out"/></method>
            <method name="Set"><arg name="interface_name" type="s" direction="in"/>\
        <arg name="property_name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
            <signal name="PropertiesChanged"><arg name="interface_name" type="s"/>\
        <arg name="changed_properties" type="a{sv}"/><arg name="invalidated_properties" type="as"/></signal>
          </interface>

        """

    static func document(object: DBusObject?, children: [String]) -> String {
        var xml = header + "<node>\n" + standardInterfaces
        if let object {
            xml += propertiesInterface
            for interface in object.interfaces { xml += describe(interface) }
        }
        for child in children { xml += "  <node name=\"\(escape(child))\"/>\n" }
        return xml + "</node>\n"
    }

    static func describe(_ interface: DBusInterface) -> String {
        var xml = "  <interface name=\"\(escape(interface.name))\">\n"
        for method in interface.methods {
            xml += "    <method name=\"\(escape(method.name))\">"
            xml += method.inArguments.map { argument($0, direction: "in") }.joined()
            xml += method.outArguments.map { argument($0, direction: "out") }.joined()
            xml += "</method>\n"
        }
        for property in interface.properties {
            let opening = "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.signature))\" access=\"read\""
            switch property.changeSignal {
            case .value:
                xml += opening + "/>\n"
            case .invalidates:
                xml +=
                    opening + ">\n      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"invalidates\"/>\n"
                    + "    </property>\n"
            }
        }
        for signal in interface.signals {
            xml += "    <signal name=\"\(escape(signal.name))\">"
            xml += signal.arguments.map { argument($0, direction: nil) }.joined()
            xml += "</signal>\n"
        }
        return xml + "  </interface>\n"
    }

    static func argument(_ argument: DBusArgument, direction: String?) -> String {
        let directionAttribute = direction.map { " direction=\"\($0)\"" } ?? ""
        return "<arg name=\"\(escape(argument.name))\" type=\"\(escape(argument.signature))\"\(directionAttribute)/>"
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Names of the nodes directly below `path` among `paths`.
    static func children(of path: String, among paths: some Sequence<String>) -> [String] {
        let prefix = path == "/" ? "/" : path + "/"
        var names = Set<String>()
        for candidate in paths where candidate.hasPrefix(prefix) && candidate != path {
            let rest = candidate.dropFirst(prefix.count)
            if let first = rest.split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }
}
