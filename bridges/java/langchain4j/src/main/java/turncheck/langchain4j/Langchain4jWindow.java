package turncheck.langchain4j;

import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.memory.chat.TokenWindowChatMemory;
import dev.langchain4j.model.openai.OpenAiTokenCountEstimator;

/**
 * {@code peer:langchain4j-window} ({@code messages}: {@link MessageWindowChatMemory}, its maxMessages
 * the newest messages that fit the budget under turncheck's costs) and {@code peer:langchain4j-token-window} ({@code tokens}: {@link TokenWindowChatMemory},
 * the budget its maxTokens, counted by langchain4j's {@link OpenAiTokenCountEstimator} for gpt-4o).
 */
public final class Langchain4jWindow {

	public static void main(String[] args) {
		if (args.length == 1 && args[0].equals("messages")) {
			Langchain4jExec.serve(budget -> MessageWindowChatMemory.withMaxMessages(Math.max(1, budget.messages())));
		}
		else if (args.length == 1 && args[0].equals("tokens")) {
			var estimator = new OpenAiTokenCountEstimator("gpt-4o");
			Langchain4jExec.serve(budget -> TokenWindowChatMemory.withMaxTokens(Math.max(1, budget.tokens()), estimator));
		}
		else {
			System.err.println("usage: Langchain4jWindow messages|tokens");
			System.exit(2);
		}
	}

}
