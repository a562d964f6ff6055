import org.springframework.ai.chat.memory.MessageWindowChatMemory;

import turncheck.springai.SpringAiExec;

/** A chat memory of your own over Spring AI 2.0, as a trimmer: the newest messages that fit. */
public final class MyMemory {

	public static void main(String[] args) {
		SpringAiExec.serve(budget -> MessageWindowChatMemory.builder().maxMessages(budget.messages()).build());
	}

}
