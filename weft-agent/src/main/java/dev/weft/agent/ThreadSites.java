package dev.weft.agent;

import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.description.field.FieldDescription;
import net.bytebuddy.description.field.FieldList;
import net.bytebuddy.description.method.MethodList;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.jar.asm.ClassVisitor;
import net.bytebuddy.jar.asm.Handle;
import net.bytebuddy.jar.asm.Label;
import net.bytebuddy.jar.asm.MethodVisitor;
import net.bytebuddy.jar.asm.Opcodes;
import net.bytebuddy.jar.asm.Type;
import net.bytebuddy.pool.TypePool;
import dev.weft.agent.boot.Glob;
import dev.weft.agent.boot.Threads;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.matcher.ElementMatchers;
import net.bytebuddy.utility.JavaModule;
import net.bytebuddy.utility.OpenedClassReader;

import java.lang.instrument.Instrumentation;
import java.util.Set;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;

/**
 * The {@code threads=} option's rewrite of an application class: each {@code new Thread(runnable)} or
 * {@code new Thread(runnable, name)} of exactly {@code java.lang.Thread} is followed by a call that swaps the
 * new, unstarted thread for a virtual one ({@code dev.weft.agent.boot.Threads.convert}); the calls the JDK
 * would refuse or ignore on a virtual thread ({@code setDaemon}, {@code isDaemon}, {@code start}, {@code run}
 * on a {@code Thread}, called or as a method reference such as {@code Thread::start}) go through the same class,
 * which keeps what the application asked for.
 *
 * <p>Why after the constructor and not instead of it: {@code NEW}, {@code DUP}, the arguments and
 * {@code INVOKESPECIAL <init>} stay as they are, so every stack-map frame between them (a ternary in the
 * arguments makes one, holding the uninitialized thread) stays valid; the inserted call takes the initialized
 * {@code Thread} on the stack and leaves a {@code Thread}, so no frame changes either. Replacing the
 * {@code NEW}...{@code <init>} sequence by a static factory would have to drop {@code NEW}/{@code DUP} and
 * every uninitialized entry of the frames in between. The unstarted platform thread so made lends its name
 * (the JDK's own {@code Thread-N} numbering), daemon status and context class loader, as a pool's factory
 * thread does.
 */
final class ThreadSites implements AsmVisitorWrapper {
    /** Packages never changed, whatever {@code threads=} says: the JDK's, the agent's, Byte Buddy's. */
    static final List<String> NEVER = List.of("java.", "javax.", "jdk.", "sun.", "com.sun.", "dev.weft.agent.",
            "net.bytebuddy.");
    private static final String THREAD = "java/lang/Thread";
    private static final String HELPER = "dev/weft/agent/boot/Threads";
    /** The constructors kept faithfully: no ThreadGroup (a virtual thread's group is fixed), no stack size. */
    static final Map<String, String> CONVERTED = Map.of(
            "(Ljava/lang/Runnable;)V", "new Thread(Runnable)",
            "(Ljava/lang/Runnable;Ljava/lang/String;)V", "new Thread(Runnable, String)");
    /** Thread's methods whose meaning a converted thread keeps only through the helper. */
    private static final Map<String, String> CALLS = Map.of(
            "setDaemon(Z)V", "(Ljava/lang/Thread;Z)V",
            "isDaemon()Z", "(Ljava/lang/Thread;)Z",
            "start()V", "(Ljava/lang/Thread;)V",
            "run()V", "(Ljava/lang/Thread;)V");

    private static final String LAMBDA_METAFACTORY = "java/lang/invoke/LambdaMetafactory";
    /** {@code LambdaMetafactory.FLAG_SERIALIZABLE}. */
    private static final int FLAG_SERIALIZABLE = 1;

    private final String glob;
    private final boolean verbose;

    ThreadSites(String glob, boolean verbose) {
        this.glob = glob;
        this.verbose = verbose;
    }

    /** The classes {@code threads=} names, less those it never changes and those {@code exclude=} names. */
    static ElementMatcher<TypeDescription> classes(AgentOptions options) {
        if (options.threads().isEmpty()) {
            return ElementMatchers.none(); // without threads= no application class is looked at
        }
        return type -> glob(options, type.getName()) != null;
    }

    /** The first {@code threads=} glob that names the class; null when none does, or it is never changed. */
    static String glob(AgentOptions options, String className) {
        for (String p : NEVER) {
            if (className.startsWith(p)) {
                return null;
            }
        }
        for (String glob : options.excludes()) {
            if (Glob.matches(glob, className)) {
                return null;
            }
        }
        for (String glob : options.threads()) {
            if (Glob.matches(glob, className)) {
                return glob;
            }
        }
        return null;
    }

    /**
     * Whether a class of this loader can call the helpers: the inserted calls are not guarded (an advice is), so a
     * loader that does not delegate {@code dev.weft.agent.boot} to the boot loader (an OSGi bundle's without
     * boot delegation) would meet {@code NoClassDefFoundError} at each {@code new Thread}; its classes are left
     * as they are, with one line.
     */
    static boolean seesHelpers(String className, ClassLoader loader) {
        if (loader == null) {
            return true;
        }
        try {
            if (Class.forName(Threads.class.getName(), false, loader) == Threads.class) {
                return true;
            }
        } catch (ClassNotFoundException | LinkageError e) {
            // not visible
        }
        System.err.println("weft agent: " + className + ": its class loader (" + loader + ") does not see "
                + Threads.class.getPackageName() + "; its new Thread sites are left as they are (OSGi: "
                + "-Dorg.osgi.framework.bootdelegation=" + Threads.class.getPackageName() + ")");
        return false;
    }

    /** A class of a named module must read the helpers' (the boot loader's unnamed module) to call them. */
    static void readHelpers(Instrumentation inst, JavaModule module, Module helpers) {
        if (module != null && module.isNamed() && !((Module) module.unwrap()).canRead(helpers)) {
            inst.redefineModule((Module) module.unwrap(), Set.of(helpers), Map.of(), Map.of(), Set.of(), Map.of());
        }
    }

    @Override
    public int mergeWriter(int flags) {
        return flags; // neither the frames nor the maximum stack change
    }

    @Override
    public int mergeReader(int flags) {
        return flags;
    }

    @Override
    public ClassVisitor wrap(TypeDescription type, ClassVisitor visitor, Implementation.Context context, TypePool pool,
                             FieldList<FieldDescription.InDefinedShape> fields, MethodList<?> methods, int writerFlags,
                             int readerFlags) {
        return new ClassVisitor(OpenedClassReader.ASM_API, visitor) {
            private final List<String> converted = new ArrayList<>();
            private final List<String> left = new ArrayList<>();

            @Override
            public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                                             String[] exceptions) {
                return new Sites(super.visitMethod(access, name, descriptor, signature, exceptions),
                        type.getName() + "." + name, converted, left);
            }

            @Override
            public void visitEnd() {
                super.visitEnd();
                if (!converted.isEmpty()) {
                    System.err.println("weft agent: " + type.getName() + ": " + converted.size() + " new Thread(...) "
                            + (converted.size() == 1 ? "site makes" : "sites make") + " virtual threads (threads="
                            + glob + ")");
                }
                if (verbose) {
                    for (String s : converted) {
                        System.err.println("weft agent:   converted " + s);
                    }
                    for (String s : left) {
                        System.err.println("weft agent:   left alone " + s);
                    }
                }
            }
        };
    }

    /** One method's instructions: each NEW java/lang/Thread is matched with its INVOKESPECIAL, innermost first. */
    private static final class Sites extends MethodVisitor {
        private final String method;
        private final List<String> converted;
        private final List<String> left;
        /** One entry per NEW java/lang/Thread not yet initialized: was it followed at once by DUP. */
        private final Deque<boolean[]> pending = new ArrayDeque<>();
        private boolean afterNew;
        private int line;

        Sites(MethodVisitor visitor, String method, List<String> converted, List<String> left) {
            super(OpenedClassReader.ASM_API, visitor);
            this.method = method;
            this.converted = converted;
            this.left = left;
        }

        private void other() {
            afterNew = false;
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            other();
            super.visitTypeInsn(opcode, type);
            if (opcode == Opcodes.NEW && type.equals(THREAD)) {
                pending.push(new boolean[1]);
                afterNew = true;
            }
        }

        @Override
        public void visitInsn(int opcode) {
            if (afterNew && opcode == Opcodes.DUP) {
                pending.peek()[0] = true; // the initialized thread stays on the stack for the inserted call
            }
            other();
            super.visitInsn(opcode);
        }

        @Override
        public void visitMethodInsn(int opcode, String owner, String name, String descriptor, boolean isInterface) {
            other();
            if (opcode == Opcodes.INVOKESPECIAL && owner.equals(THREAD) && name.equals("<init>")) {
                super.visitMethodInsn(opcode, owner, name, descriptor, isInterface);
                if (pending.isEmpty()) {
                    return; // a Thread subclass's super(...) call: not a new Thread
                }
                boolean dup = pending.pop()[0];
                String shape = CONVERTED.get(descriptor);
                String where = method + (line > 0 ? " line " + line : "");
                if (dup && shape != null) {
                    super.visitMethodInsn(Opcodes.INVOKESTATIC, HELPER, "convert",
                            "(Ljava/lang/Thread;)Ljava/lang/Thread;", false);
                    converted.add(shape + " in " + where);
                } else {
                    left.add("new Thread(" + parameters(descriptor) + ") in " + where
                            + (dup ? " (a ThreadGroup, stack size or no Runnable: kept as a platform thread)"
                            : " (not NEW, DUP: an unusual compiler's shape)"));
                }
                return;
            }
            String helper = opcode == Opcodes.INVOKEVIRTUAL && owner.equals(THREAD) ? CALLS.get(name + descriptor) : null;
            if (helper != null) {
                super.visitMethodInsn(Opcodes.INVOKESTATIC, HELPER, name, helper, false);
            } else {
                super.visitMethodInsn(opcode, owner, name, descriptor, isInterface);
            }
        }

        private static String parameters(String descriptor) {
            StringBuilder b = new StringBuilder();
            for (Type t : Type.getArgumentTypes(descriptor)) {
                String n = t.getClassName();
                b.append(b.isEmpty() ? "" : ", ").append(n.substring(n.lastIndexOf('.') + 1));
            }
            return b.toString();
        }

        @Override
        public void visitLineNumber(int line, Label start) {
            this.line = line;
            super.visitLineNumber(line, start);
        }

        // Every other instruction ends "just after NEW".
        @Override
        public void visitIntInsn(int opcode, int operand) {
            other();
            super.visitIntInsn(opcode, operand);
        }

        @Override
        public void visitVarInsn(int opcode, int varIndex) {
            other();
            super.visitVarInsn(opcode, varIndex);
        }

        @Override
        public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
            other();
            super.visitFieldInsn(opcode, owner, name, descriptor);
        }

        @Override
        public void visitInvokeDynamicInsn(String name, String descriptor, Handle bootstrap, Object... arguments) {
            other();
            super.visitInvokeDynamicInsn(name, descriptor, bootstrap, rerouted(bootstrap, arguments));
        }

        /**
         * A method reference {@code Thread::start} (and the other {@link #CALLS}, bound or not) is a lambda whose
         * implementation is the Thread method itself: it is pointed at the helper, as the plain calls are.
         * {@code LambdaMetafactory} takes a static method whose first parameter is the receiver for an instance
         * one (the instantiated type, {@code (Thread)V} or the captured receiver, is the same). Serializable
         * lambdas keep theirs: the class's {@code $deserializeLambda$} checks the method it was compiled with.
         */
        private static Object[] rerouted(Handle bootstrap, Object[] arguments) {
            if (!bootstrap.getOwner().equals(LAMBDA_METAFACTORY) || arguments.length < 3
                    || !(arguments[1] instanceof Handle impl) || impl.getTag() != Opcodes.H_INVOKEVIRTUAL
                    || !impl.getOwner().equals(THREAD)) {
                return arguments;
            }
            String helper = CALLS.get(impl.getName() + impl.getDesc());
            boolean serializable = bootstrap.getName().equals("altMetafactory") && arguments.length > 3
                    && arguments[3] instanceof Integer flags && (flags & FLAG_SERIALIZABLE) != 0;
            if (helper == null || serializable
                    || !(bootstrap.getName().equals("metafactory") || bootstrap.getName().equals("altMetafactory"))) {
                return arguments;
            }
            Object[] changed = arguments.clone();
            changed[1] = new Handle(Opcodes.H_INVOKESTATIC, HELPER, impl.getName(), helper, false);
            return changed;
        }

        @Override
        public void visitJumpInsn(int opcode, Label label) {
            other();
            super.visitJumpInsn(opcode, label);
        }

        @Override
        public void visitLabel(Label label) {
            other();
            super.visitLabel(label);
        }

        @Override
        public void visitLdcInsn(Object value) {
            other();
            super.visitLdcInsn(value);
        }

        @Override
        public void visitIincInsn(int varIndex, int increment) {
            other();
            super.visitIincInsn(varIndex, increment);
        }

        @Override
        public void visitTableSwitchInsn(int min, int max, Label dflt, Label... labels) {
            other();
            super.visitTableSwitchInsn(min, max, dflt, labels);
        }

        @Override
        public void visitLookupSwitchInsn(Label dflt, int[] keys, Label[] labels) {
            other();
            super.visitLookupSwitchInsn(dflt, keys, labels);
        }

        @Override
        public void visitMultiANewArrayInsn(String descriptor, int numDimensions) {
            other();
            super.visitMultiANewArrayInsn(descriptor, numDimensions);
        }
    }
}
