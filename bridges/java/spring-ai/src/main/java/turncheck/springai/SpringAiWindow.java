package turncheck.springai;

import org.springframework.ai.chat.memory.MessageWindowChatMemory;

/**
 * {@code peer:spring-ai-window*}: Spring AI's own {@link MessageWindowChatMemory}, its maxMessages the
 * newest messages that fit the budget under turncheck's costs (at least one).
 */
public final class SpringAiWindow {

	public static void main(String[] args) {
		SpringAiExec.serve(budget -> MessageWindowChatMemory.builder().maxMessages(Math.max(1, budget.messages())).build());
	}

}
