import java.util.List;

import turncheck.exec.ExecTrimmer;

/** keep_last.mjs's rule in Java: keep the newest {@code budget} messages. */
public final class KeepLast {

	public static void main(String[] args) {
		ExecTrimmer.serve((messages, budget) -> budget > 0
				? messages.subList(Math.max(0, messages.size() - budget), messages.size()) : List.of());
	}

}
