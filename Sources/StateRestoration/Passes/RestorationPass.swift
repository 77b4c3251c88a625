import Foundation
import StateJournal

/// One restoration: reads the entries, applies migrations, obtains each object in UIKit's lookup
/// order, decodes the obtained objects, then runs the finish pass.
final class RestorationPass: ReferenceResolving {
    struct Input {
        let state: JournalState
        let roots: [any RestorableController]
        let registry: RestorationRegistry
        let typeNames: TypeNameCache
        weak var delegate: (any ApplicationRestorationDelegate)?
        let savedBundleVersion: String?
        let currentBundleVersion: String
        /// The path the roots were saved under: the store's root, or a scene's component.
        var base = RestorationPath([String]())
    }

    private let input: Input
    private(set) var obtained: [RestorationPath: any StateRestoring] = [:]
    private var live: [RestorationPath: AnyObject] = [:]
    private var childIndex: [ObjectIdentifier: [String: AnyObject]] = [:]
    /// Restored objects by identity, to resolve references a coder encodes during restoration.
    private var obtainedPaths: [ObjectIdentifier: RestorationPath] = [:]
    private(set) var report: RestorationReport
    /// Objects created by an object restoration class, to register once decoded.
    /// Objects their restoration class created, with the object restored at their parent path (nil
    /// at the root): the manager registers each there, so it keeps the path it was restored at.
    private(set) var created: [(object: any StateRestoring, identifier: String, parent: AnyObject?)] = []
    /// Controllers a restoration class or the delegate returned, which only a parent can attach.
    private var suppliedControllers: [(path: RestorationPath, controller: any RestorableController)] = []
    /// Objects that a decode obtained through a reference: the referrer may hold them.
    private var referenced: Set<ObjectIdentifier> = []
    /// Paths whose saved values registered migrations rewrote.
    private var migrated: Set<RestorationPath> = []

    init(_ input: Input, report: RestorationReport) {
        self.input = input
        self.report = report
    }

    func registeredCodingClass(named name: String) -> (any (NSObject & NSCoding).Type)? {
        input.registry.codingClasses[name]
    }

    func run() {
        let entries = readEntries()
        var order: [(path: RestorationPath, entry: RestorableEntry, object: any StateRestoring, decode: Bool)] = []
        var declined: Set<RestorationPath> = []
        for (path, entry) in entries {
            if let ancestor = firstAncestor(of: path, in: declined) {
                skip(path, entry.typeName, .ancestorDeclined(ancestor))
                continue
            }
            let coder = RestorationCoder(path: path, values: entry.values, resolver: self)
            let outcome = obtain(path, entry, coder)
            report.diagnostics.append(contentsOf: coder.diagnostics.map(RestorationDiagnostic.coder))
            switch outcome {
            case .skipped(let reason):
                switch reason {
                case .declinedByRestorationClass, .unregisteredRestorationClass: declined.insert(path)
                default: break
                }
                skip(path, entry.typeName, reason)
            case .obtained(let (object, source)):
                obtained[path] = object
                if obtainedPaths[ObjectIdentifier(object)] == nil { obtainedPaths[ObjectIdentifier(object)] = path }
                let matches = input.typeNames.object(object, isKindOf: entry.typeName)
                if !matches {
                    report.diagnostics.append(
                        .classMismatch(path, savedType: entry.typeName, obtainedType: input.typeNames.name(of: object)))
                }
                report.restored.append(
                    RestoredObject(
                        path: path, savedTypeName: entry.typeName, source: source, decoded: matches,
                        migrated: migrated.contains(path)))
                if source != .existing, let controller = object as? any RestorableController {
                    suppliedControllers.append((path, controller))
                }
                order.append((path, entry, object, matches))
                if source == .restorationClass && entry.kind == .object, let last = path.components.last,
                    input.registry.registration(of: object) == nil
                {
                    if let parentPath = path.parent, parentPath != input.base {
                        if let parent = obtained[parentPath] ?? existing(at: parentPath) {
                            created.append((object, last, parent))
                        } else {
                            report.diagnostics.append(.createdObjectWithoutParent(path))
                        }
                    } else {
                        created.append((object, last, nil))
                    }
                }
            }
        }
        for (index, item) in order.enumerated() where item.decode {
            let coder = RestorationCoder(path: item.path, values: item.entry.values, resolver: self)
            do {
                try item.object.decodeRestorableState(with: coder)
            } catch {
                report.diagnostics.append(.decodeFailed(item.path, message: "\(error)"))
                report.restored[index].decoded = false
            }
            report.diagnostics.append(contentsOf: coder.diagnostics.map(RestorationDiagnostic.coder))
        }
        finish(order.map(\.object))
    }

    /// Calls `applicationFinishedRestoringState()` once on every obtained object.
    private func finish(_ objects: [any StateRestoring]) {
        var seen: Set<ObjectIdentifier> = []
        for object in objects where seen.insert(ObjectIdentifier(object)).inserted {
            object.applicationFinishedRestoringState()
        }
    }

    // MARK: - Entries

    private func readEntries() -> [(RestorationPath, RestorableEntry)] {
        var result: [(RestorationPath, RestorableEntry)] = []
        // The state lists its paths in path order: each parent before its descendants, whatever the
        // spelling of their components.
        for (path, bytes) in input.state where path != RestorationManager.applicationPath {
            do {
                var entry = try RestorableEntry(decoding: bytes)
                guard entry.kind != .application else {
                    throw RestorationError(
                        .corruptEntry, "An application entry is only allowed at \(RestorationManager.applicationPath).")
                }
                if try migrate(&entry, at: path) { migrated.insert(path) }
                result.append((path, entry))
            } catch let error as MigrationFailure {
                skip(path, error.typeName, .migrationFailed("\(error.underlying)"))
            } catch {
                skip(path, nil, .corruptEntry("\(error)"))
            }
        }
        return result
    }

    private struct MigrationFailure: Error {
        let typeName: String
        let underlying: any Error
    }

    /// Applies the migrations registered for the entry's restoration class, when it was saved by
    /// another bundle version; returns whether any ran.
    private func migrate(_ entry: inout RestorableEntry, at path: RestorationPath) throws -> Bool {
        guard input.savedBundleVersion != input.currentBundleVersion, let name = entry.restorationClassName,
            let migrations = input.registry.migrations[name], !migrations.isEmpty
        else { return false }
        var state = MigratingState(
            path: path, typeName: entry.typeName, savedBundleVersion: input.savedBundleVersion,
            currentBundleVersion: input.currentBundleVersion, values: entry.values)
        do {
            for migration in migrations { try migration.migrate(&state) }
        } catch {
            throw MigrationFailure(typeName: entry.typeName, underlying: error)
        }
        entry.values = state.values
        return true
    }

    private func skip(_ path: RestorationPath, _ typeName: String?, _ reason: RestorationSkipReason) {
        report.skipped.append(SkippedObject(path: path, savedTypeName: typeName, reason: reason))
    }

    private func firstAncestor(of path: RestorationPath, in set: Set<RestorationPath>) -> RestorationPath? {
        guard !set.isEmpty else { return nil }
        var current = path.parent
        while let ancestor = current, !ancestor.components.isEmpty {
            if set.contains(ancestor) { return ancestor }
            current = ancestor.parent
        }
        return nil
    }

    // MARK: - Lookup

    private enum Lookup {
        case obtained((any StateRestoring, RestorationSource))
        case skipped(RestorationSkipReason)
    }

    /// UIKit's order: the restoration class (whose `nil` ends the lookup), then the delegate, then
    /// what already exists at the path. Custom objects: their restoration class, or a registration.
    private func obtain(_ path: RestorationPath, _ entry: RestorableEntry, _ coder: RestorationCoder)
        -> Lookup
    {
        if let name = entry.restorationClassName {
            switch entry.kind {
            case .controller:
                guard let type = input.registry.controllerClasses[name] else {
                    return .skipped(.unregisteredRestorationClass(name))
                }
                guard
                    let controller = type.controller(withRestorationIdentifierPath: identifierPath(path), coder: coder)
                else {
                    return .skipped(.declinedByRestorationClass)
                }
                if let root = existingRoot(at: path), root !== controller,
                    !coder.containsValue(forKey: ArchiveKey.viewControllerStoryboard)
                {
                    return .obtained((root, .existing))
                }
                return .obtained((controller, .restorationClass))
            case .object, .application:
                guard let type = input.registry.objectClasses[name] else {
                    return .skipped(.unregisteredRestorationClass(name))
                }
                guard let object = type.object(withRestorationIdentifierPath: identifierPath(path), coder: coder) else {
                    return .skipped(.declinedByRestorationClass)
                }
                return .obtained((object, .restorationClass))
            }
        }
        if entry.kind == .controller,
            let controller = input.delegate?.controller(
                withRestorationIdentifierPath: identifierPath(path), coder: coder)
        {
            return .obtained((controller, .delegate))
        }
        if let object = existing(at: path) as? any StateRestoring {
            return .obtained((object, .existing))
        }
        if entry.kind == .controller, let identifier = path.components.last,
            let factory = input.registry.controllerFactories[identifier]
        {
            return .obtained((factory(), .registeredFactory))
        }
        return .skipped(.notFound)
    }

    /// The root the app passed in for a root controller's path, which UIKit's rule keeps over a new
    /// controller a restoration class returns for that path unless the saved state came from a
    /// storyboard (its coder holds ``ArchiveKey/viewControllerStoryboard``): the window's root
    /// controller stays the one the app created at launch.
    private func existingRoot(at path: RestorationPath) -> (any RestorableController)? {
        guard path.parent == input.base, let identifier = path.components.last else { return nil }
        return input.roots.first { $0.restorationIdentifier == identifier }
    }

    /// The restoration identifier path the app sees for `path`: from its root controller, without
    /// the scene's component, as UIKit gives it.
    private func identifierPath(_ path: RestorationPath) -> [String] {
        input.base.components.isEmpty ? path.components : Array(path.components.dropFirst(input.base.components.count))
    }

    /// The object at `path` in the app as it is now: a root, a child of an obtained or existing
    /// parent, or an object registered under that parent.
    private func existing(at path: RestorationPath) -> AnyObject? {
        if let known = live[path] { return known }
        guard let identifier = path.components.last, let parentPath = path.parent else { return nil }
        var found: AnyObject?
        if parentPath == input.base {
            found = input.roots.first { $0.restorationIdentifier == identifier }
            if found == nil && input.base.components.isEmpty {
                found =
                    input.registry.registrations(scopedUnder: nil)
                    .first { $0.parentID == nil && $0.identifier == identifier }?.object
            }
        } else if let parent = obtained[parentPath] ?? existing(at: parentPath) {
            found = children(of: parent)[identifier]
            if found == nil {
                found = input.registry.registeredObject(at: path, parent: parent)
            }
        }
        if let found { live[path] = found }
        return found
    }

    /// The children of a controller by identifier, read once per parent (the first one wins).
    private func children(of parent: AnyObject) -> [String: AnyObject] {
        let id = ObjectIdentifier(parent)
        if let known = childIndex[id] { return known }
        var index: [String: AnyObject] = [:]
        if let controller = parent as? any RestorableController {
            for child in controller.restorationChildren {
                if let identifier = child.restorationIdentifier, index[identifier] == nil { index[identifier] = child }
            }
        }
        childIndex[id] = index
        return index
    }

    // MARK: - ReferenceResolving

    func referencePath(for object: any StateRestoring, encodedBy coder: RestorationCoder) throws -> RestorationPath? {
        obtainedPaths[ObjectIdentifier(object)]
    }

    func savedPath(of object: any StateRestoring) -> RestorationPath? { obtainedPaths[ObjectIdentifier(object)] }

    func restoredObject(at path: RestorationPath) -> (any StateRestoring)? {
        guard let object = obtained[path] else { return nil }
        referenced.insert(ObjectIdentifier(object))
        return object
    }

    // MARK: - Controllers no parent holds

    /// The paths of the controllers a restoration class or the delegate returned that nothing holds
    /// now: not in the hierarchy under `roots` (walked as a preservation pass walks it), and not
    /// obtained by any decode through a reference. The next preservation pass would drop them.
    ///
    /// - Complexity: O(*n*) in the hierarchy under the roots, once per restoration; nothing when
    ///   no controller was supplied.
    func controllersNoParentHolds(roots: [any RestorableController]) -> [RestorationPath] {
        let candidates = suppliedControllers.filter { !referenced.contains(ObjectIdentifier($0.controller)) }
        guard !candidates.isEmpty else { return [] }
        var reachable: Set<ObjectIdentifier> = []
        var stack = roots.filter { $0.restorationIdentifier != nil }
        while let next = stack.popLast() {
            guard reachable.insert(ObjectIdentifier(next)).inserted else { continue }
            stack.append(contentsOf: next.restorationChildren.filter { $0.restorationIdentifier != nil })
        }
        return candidates.filter { !reachable.contains(ObjectIdentifier($0.controller)) }.map(\.path)
    }
}
